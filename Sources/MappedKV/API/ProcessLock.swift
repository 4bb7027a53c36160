/// Which inter-process lock a multi-process store takes (docs/FORMAT.md 6.6).
///
/// Every process that shares a store must use the same one. The choice is recorded in the files
/// while a process has the store open, and an open with the other one fails with
/// ``MappedKVError/modeConflict(id:reason:)`` instead of running unsafely beside it.
public enum ProcessLock: Sendable, Equatable {
    /// `flock(2)` on the `.crc` file, as MMKV's `MULTI_PROCESS` mode: the default, and the only
    /// choice for a store shared with MMKV processes. Every write costs two system calls.
    case flock
    /// A process-owned futex lock in a small file beside the store, `<data file>.lock`: a write
    /// takes and releases it with two atomic instructions and no system call, and a process
    /// killed while holding it is detected and its lock taken over, as with `flock`.
    ///
    /// MMKV processes know nothing of this lock: **never share a store in this mode with an
    /// MMKV process**, or with a MappedKV older than this mode; neither can be detected. All
    /// processes must see one PID namespace (the lock names its holder by process ID and start
    /// time). The mode stays with the store while it is open anywhere in it; the first open with
    /// ``flock`` after every process has closed it removes the lock file and returns the store to
    /// MMKV's protocol.
    case sharedMemory
}
