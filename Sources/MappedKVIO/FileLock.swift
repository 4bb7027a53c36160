import Glibc

/// Which kind of inter-process lock to take.
package enum LockKind: Sendable, Equatable {
    /// Many holders at once: readers.
    case shared
    /// One holder: writers.
    case exclusive
}

/// A recursive `flock(2)` lock on one open file, with MMKV's counting rules (docs/FORMAT.md 6.1).
///
/// Nested locks only count. An exclusive lock requested while holding a shared one is an upgrade
/// (non-blocking attempt, then unlock and a blocking lock): it is **not atomic**, so whoever upgrades
/// must re-check shared state afterwards. Releasing the last exclusive lock while shared ones remain
/// downgrades to shared. `flock` locks belong to the open file description: two descriptors of the
/// same file in one process block each other.
///
/// Not thread-safe: the owner serializes calls.
package final class FileLock {
    /// The locked file.
    package let file: FileDescriptor
    /// Nested shared locks held.
    package var sharedCount: Int { sharedLevels }
    /// Nested exclusive locks held.
    package var exclusiveCount: Int { exclusiveLevels }
    // The counts themselves are private, so that the optimizer sees every access to them and can
    // drop the dynamic exclusivity checks a class's stored `var` otherwise pays on each one
    // (two calls into the runtime a lock and two an unlock: `mappedkv bench --multi-process` set_int32).
    private var sharedLevels = 0
    private var exclusiveLevels = 0

    /// A lock on `file`, initially not held.
    package init(_ file: FileDescriptor) { self.file = file }

    /// Whether any lock is held.
    package var isHeld: Bool { sharedLevels > 0 || exclusiveLevels > 0 }

    /// Takes the lock, blocking while another process holds a conflicting one.
    ///
    /// - Returns: true if the file's lock state changed (a first lock or an upgrade), which means
    ///   another process may have written since this process last looked.
    @discardableResult
    package func lock(_ kind: LockKind) throws(SystemError) -> Bool {
        switch kind {
        case .shared:
            if isHeld {
                sharedLevels += 1
                return false
            }
            try apply(LOCK_SH)
            sharedLevels = 1
            return true
        case .exclusive:
            if exclusiveLevels > 0 {
                exclusiveLevels += 1
                return false
            }
            if sharedLevels > 0 {
                // A failed conversion drops the shared lock on Linux, so fall back to unlock + lock.
                if try !tryApply(LOCK_EX | LOCK_NB) {
                    try apply(LOCK_UN)
                    try apply(LOCK_EX)
                }
            } else {
                try apply(LOCK_EX)
            }
            exclusiveLevels = 1
            return true
        }
    }

    /// Takes the exclusive lock only if no other process holds the file locked.
    ///
    /// - Returns: nil if the lock is busy; otherwise whether the lock state changed, as ``lock(_:)``.
    package func tryLockExclusive() throws(SystemError) -> Bool? {
        if exclusiveLevels > 0 {
            exclusiveLevels += 1
            return false
        }
        if try tryApply(LOCK_EX | LOCK_NB) {
            exclusiveLevels = 1
            return true
        }
        // Linux drops a shared lock whose conversion failed: take it back.
        if sharedLevels > 0 { try apply(LOCK_SH) }
        return nil
    }

    /// Releases one level of `kind`; the last exclusive level downgrades to shared if shared levels remain.
    package func unlock(_ kind: LockKind) throws(SystemError) {
        switch kind {
        case .shared:
            precondition(sharedLevels > 0, "unlocking a shared lock that is not held")
            sharedLevels -= 1
            if sharedLevels == 0 && exclusiveLevels == 0 { try apply(LOCK_UN) }
        case .exclusive:
            precondition(exclusiveLevels > 0, "unlocking an exclusive lock that is not held")
            exclusiveLevels -= 1
            if exclusiveLevels == 0 { try apply(sharedLevels > 0 ? LOCK_SH : LOCK_UN) }
        }
    }

    private func apply(_ operation: Int32) throws(SystemError) {
        _ = try syscall("flock", path: file.path) { flock(file.rawValue, operation) }
    }

    private func tryApply(_ operation: Int32) throws(SystemError) -> Bool {
        while true {
            if flock(file.rawValue, operation) == 0 { return true }
            let code = Glibc.errno
            if code == EINTR { continue }
            if code == EWOULDBLOCK { return false }
            throw SystemError("flock", path: file.path, errno: code)
        }
    }
}
