// The time source of `MemoryCache`.
//
// Invariant: a clock reports elapsed time since an origin fixed when the clock was made, so every
// reading fits in 64 bits of nanoseconds and the cache can compare readings without 128-bit arithmetic.

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The time source a ``MemoryCache`` reads for access times, time-to-live expiry and the age limit.
///
/// A clock reports the time elapsed since a fixed origin. The cache treats it as monotonic: a reading
/// earlier than one it has already seen counts as the latest reading it has seen.
///
/// ``coarse`` (the default of ``MemoryCache``) and ``continuous`` read the system; tests make a clock from a closure
/// and move time forward by hand:
///
/// ```swift
/// let now = Mutex(Duration.zero)
/// let clock = MemoryCacheClock { now.withLock { $0 } }
/// let cache = MemoryCache<String, Int>(clock: clock)
/// now.withLock { $0 += .seconds(10) }
/// ```
public struct MemoryCacheClock: Sendable {
    @usableFromInline
    enum Source: Sendable {
        /// The system's continuous clock, in nanoseconds, minus the origin.
        case system(origin: Int64)
        /// The system's coarse monotonic clock, in nanoseconds, minus the origin.
        case coarse(origin: Int64)
        /// A caller's closure.
        case custom(@Sendable () -> Duration)
    }

    @usableFromInline let source: Source

    /// Makes a clock that reads `now`, the time elapsed since an origin of the caller's choosing.
    ///
    /// - Parameter now: Returns the current time as a duration since a fixed origin. It should never go
    ///   backwards, and it is called without any lock of the cache held.
    public init(now: @escaping @Sendable () -> Duration) {
        source = .custom(now)
    }

    private init(source: Source) {
        self.source = source
    }

    /// The system's continuous clock: the same time base as `ContinuousClock` (`CLOCK_BOOTTIME` on Linux,
    /// `CLOCK_MONOTONIC` on Darwin),
    /// with its origin at the moment this property is read.
    public static var continuous: MemoryCacheClock {
        MemoryCacheClock(source: .system(origin: systemNanoseconds()))
    }

    /// A cheaper, coarser clock: the kernel's tick-granular monotonic clock (`CLOCK_MONOTONIC_COARSE` on
    /// Linux), with its origin at the moment this property is read.
    ///
    /// A reading is cheaper than a ``continuous`` one (`tools/microbench/clocks.c`), which matters on a cache's hot path, but it
    /// advances only once per kernel tick (1 to 10 ms) and does not count time the
    /// system spends suspended. Times to live and the age limit are then honoured to within a tick. The
    /// eviction order and the order of ``MemoryCache/entries(order:)`` do not depend on the clock. Elsewhere than Linux, this is ``continuous``.
    public static var coarse: MemoryCacheClock {
        #if os(Linux) || os(Android)
        MemoryCacheClock(source: .coarse(origin: coarseNanoseconds()))
        #else
        continuous
        #endif
    }

    /// The time elapsed since the clock's origin.
    public var now: Duration {
        .nanoseconds(nanoseconds)
    }

    /// The time elapsed since the clock's origin, in nanoseconds.
    @inlinable var nanoseconds: Int64 {
        switch source {
        case .system(let origin): Self.systemNanoseconds() - origin
        case .coarse(let origin): Self.coarseNanoseconds() - origin
        case .custom(let read): Self.nanoseconds(read())
        }
    }

    /// `duration` in whole nanoseconds, saturated to the range of `Int64`.
    @inlinable
    static func nanoseconds(_ duration: Duration) -> Int64 {
        let (seconds, attoseconds) = duration.components
        let (whole, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        if overflow { return seconds < 0 ? .min : .max }
        let (total, overflowAgain) = whole.addingReportingOverflow(attoseconds / 1_000_000_000)
        if overflowAgain { return seconds < 0 ? .min : .max }
        return total
    }

    /// The system's continuous clock in nanoseconds, read without `ContinuousClock`'s 128-bit
    /// arithmetic, which costs more than the cache's whole lookup.
    @inlinable
    static func systemNanoseconds() -> Int64 {
        #if canImport(Darwin)
        return Int64(clock_gettime_nsec_np(CLOCK_MONOTONIC))
        #else
        var time = timespec()
        clock_gettime(CLOCK_BOOTTIME, &time)
        return Int64(time.tv_sec) &* 1_000_000_000 &+ Int64(time.tv_nsec)
        #endif
    }

    /// The system's coarse monotonic clock in nanoseconds.
    @inlinable
    static func coarseNanoseconds() -> Int64 {
        #if os(Linux) || os(Android)
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC_COARSE, &time)
        return Int64(time.tv_sec) &* 1_000_000_000 &+ Int64(time.tv_nsec)
        #else
        return systemNanoseconds()
        #endif
    }
}
