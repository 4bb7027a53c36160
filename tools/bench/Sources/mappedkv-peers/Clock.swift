import Glibc

/// The monotonic clock, in nanoseconds.
enum Clock {
    @inline(__always)
    static func nanoseconds() -> UInt64 {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec)
    }

    /// How long `body` took, in nanoseconds.
    @inline(__always)
    static func measure(_ body: () throws -> Void) rethrows -> Double {
        let start = nanoseconds()
        try body()
        return Double(nanoseconds() - start)
    }
}
