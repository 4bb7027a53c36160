// The time an entry lasts, from Vapor's `CacheExpirationTime`, computed without overflow.
// Invariant: a lifetime of zero or less is `.over` (the entry would be expired when written), and
// a lifetime too long to count in seconds is the longest `Duration` of whole seconds, not a trap.

import Vapor

/// How long an entry lasts once written.
enum EntryLifetime: Equatable, Sendable {
    /// The entry would be expired at once: it is removed instead of written.
    case over
    /// The entry is a miss after this long.
    case lasting(Duration)

    /// The lifetime `time` names; unlike `CacheExpirationTime.seconds`, never overflows.
    init(_ time: CacheExpirationTime) {
        let (count, unit): (Int, Int) =
            switch time {
            case .seconds(let count): (count, 1)
            case .minutes(let count): (count, 60)
            case .hours(let count): (count, 3600)
            case .days(let count): (count, 86_400)
            }
        guard count > 0 else {
            self = .over
            return
        }
        let (seconds, overflow) = count.multipliedReportingOverflow(by: unit)
        self = .lasting(.seconds(overflow ? Int.max : seconds))
    }
}
