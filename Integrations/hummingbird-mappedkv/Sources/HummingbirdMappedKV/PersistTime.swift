// Wall-clock time as the persist driver reads and stores it: read in nanoseconds since 1970, stored
// as an expiry in whole milliseconds since 1970 (the envelope's format, unchanged since the first
// release).
//
// Invariants: an expiry is the millisecond that holds the exact end of the entry's life (set time
// plus duration, rounded down), and an entry is alive through that millisecond, so it never expires
// before its duration has passed. The time to live reported at `now` is the stored expiry minus
// `now` read in nanoseconds, never below zero: it is strictly less than the duration set whenever
// any time passed since the set, even within one millisecond. No arithmetic here traps: durations
// and times past Int64's range are clamped.

import Foundation

/// Wall-clock time, and the arithmetic the driver does with it.
///
/// Wall-clock time, not a monotonic clock, because expiry times are shared by processes and
/// outlive them: a monotonic clock's instants mean nothing in another boot.
enum PersistTime {
    /// Nanoseconds in one millisecond.
    static let nanosecondsPerMillisecond: Int64 = 1_000_000

    /// Now, in nanoseconds since 1970.
    @Sendable static func systemNow() -> Int64 {
        var spec = timespec()
        clock_gettime(CLOCK_REALTIME, &spec)
        return Int64(spec.tv_sec) * 1_000_000_000 + Int64(spec.tv_nsec)
    }

    /// The millisecond since 1970 that holds `nanoseconds` since 1970 (rounded down).
    static func millisecond(of nanoseconds: Int64) -> Int64 {
        let (quotient, remainder) = nanoseconds.quotientAndRemainder(dividingBy: nanosecondsPerMillisecond)
        return remainder < 0 ? quotient - 1 : quotient
    }

    /// `duration` in whole milliseconds, rounded toward zero and clamped to `Int64`'s range.
    static func milliseconds(_ duration: Duration) -> Int64 {
        let (seconds, attoseconds) = duration.components
        let (whole, overflow) = seconds.multipliedReportingOverflow(by: 1000)
        guard !overflow else { return seconds < 0 ? Int64.min : Int64.max }
        let (sum, overflowAgain) = whole.addingReportingOverflow(attoseconds / 1_000_000_000_000_000)
        guard !overflowAgain else { return seconds < 0 ? Int64.min : Int64.max }
        return sum
    }

    /// The nanoseconds of `duration` beyond its whole milliseconds (same sign as `duration`).
    static func subMillisecondNanoseconds(_ duration: Duration) -> Int64 {
        (duration.components.attoseconds % 1_000_000_000_000_000) / 1_000_000_000
    }

    /// The expiry (milliseconds since 1970) of an entry set at `now` (nanoseconds since 1970) to
    /// live for `duration`: the millisecond holding `now + duration`, clamped to `Int64`'s range.
    static func expiry(after duration: Duration, from now: Int64) -> Int64 {
        let nowMillisecond = millisecond(of: now)
        let carry = millisecond(
            of: (now - nowMillisecond * nanosecondsPerMillisecond) + subMillisecondNanoseconds(duration))
        let (sum, overflow) = nowMillisecond.addingReportingOverflow(milliseconds(duration))
        guard !overflow else { return duration < .zero ? Int64.min : Int64.max }
        let (expiry, overflowAgain) = sum.addingReportingOverflow(carry)
        guard !overflowAgain else { return carry < 0 ? Int64.min : Int64.max }
        return expiry
    }

    /// The time an entry expiring at `expiresAt` (milliseconds since 1970) has left at `now`
    /// (nanoseconds since 1970); zero in its last, partly gone, millisecond.
    static func timeLeft(until expiresAt: Int64, at now: Int64) -> Duration {
        max(.zero, .milliseconds(expiresAt) - .nanoseconds(now))
    }
}
