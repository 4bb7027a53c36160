import Glibc

/// The clock the bench times with, in nanoseconds: wall time by default; with `--clock cpu` the
/// CPU time of the whole process (every thread, user and system), which leaves out the time other
/// processes hold the cores, for runs on a shared machine. System calls and the work of background
/// threads count either way; time blocked on I/O counts only on the wall clock.
enum Clock {
    /// The clock `--clock` chose, read once from the environment the command set before measuring.
    static let id: clockid_t =
        getenv(environmentVariable).map { String(cString: $0) } == "cpu" ? CLOCK_PROCESS_CPUTIME_ID : CLOCK_MONOTONIC

    /// Where `--clock` leaves its choice for ``id``.
    static let environmentVariable = "MAPPEDKV_BENCH_CLOCK"

    /// What the report calls the chosen clock.
    static var description: String {
        id == CLOCK_MONOTONIC ? "wall time (CLOCK_MONOTONIC)" : "process CPU time (CLOCK_PROCESS_CPUTIME_ID)"
    }

    @inline(__always)
    static func nanoseconds() -> UInt64 {
        var time = timespec()
        clock_gettime(id, &time)
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
