import Glibc

/// The clock the `cache` stress workload stamps its journal lines with: `CLOCK_MONOTONIC`, which
/// on Linux is one clock for the whole system, so the times different children journal can be
/// compared with each other (a restarted child's too), and never steps back.
enum StressClock {
    /// Nanoseconds on `CLOCK_MONOTONIC`.
    static func now() -> UInt64 {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return UInt64(time.tv_sec) &* 1_000_000_000 &+ UInt64(time.tv_nsec)
    }

    /// `nanoseconds` after `origin`, in seconds with microseconds: `t+1.234567 s`.
    static func offset(_ nanoseconds: UInt64, from origin: UInt64) -> String {
        let micros = (nanoseconds &- origin) / 1_000
        let fraction = String(micros % 1_000_000)
        return "t+\(micros / 1_000_000).\(String(repeating: "0", count: 6 - fraction.count))\(fraction) s"
    }

    /// A span of nanoseconds in milliseconds with one decimal: `52.3 ms`.
    static func milliseconds(_ nanoseconds: UInt64) -> String {
        let tenths = nanoseconds / 100_000
        return "\(tenths / 10).\(tenths % 10) ms"
    }
}
