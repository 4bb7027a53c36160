import Glibc

/// Open-file-description byte-range locks (`fcntl(F_OFD_SETLK)`).
///
/// They belong to the open file description, like `flock` locks, but cover byte ranges and do not
/// interact with `flock` on Linux. MappedKV uses one on byte 1 of the `.crc` file to detect a store
/// opened in single-process mode by one process and in multi-process mode (or single-process mode)
/// by another, as Android MMKV does. They are released when the descriptor is closed.
package enum ByteRangeLock {
    /// `F_OFD_SETLK` (the same value on every Linux architecture).
    private static let setLockCommand: Int32 = 37

    /// Tries to lock `length` bytes at `offset` of `file`, shared (read) or exclusive (write).
    ///
    /// - Returns: false if another open file description holds a conflicting lock.
    package static func tryLock(
        _ file: FileDescriptor, offset: Int, length: Int, kind: LockKind
    ) throws(SystemError) -> Bool {
        var request = Self.request(Int16(kind == .exclusive ? F_WRLCK : F_RDLCK), offset: offset, length: length)
        while true {
            if fcntl(file.rawValue, setLockCommand, &request) == 0 { return true }
            let code = Glibc.errno
            if code == EINTR { continue }
            if code == EAGAIN || code == EACCES { return false }
            throw SystemError("fcntl(F_OFD_SETLK)", path: file.path, errno: code)
        }
    }

    /// Releases this open file description's lock on the range, if it holds one.
    package static func unlock(_ file: FileDescriptor, offset: Int, length: Int) throws(SystemError) {
        var request = Self.request(Int16(F_UNLCK), offset: offset, length: length)
        while fcntl(file.rawValue, setLockCommand, &request) != 0 {
            let code = Glibc.errno
            if code != EINTR { throw SystemError("fcntl(F_OFD_SETLK)", path: file.path, errno: code) }
        }
    }

    /// ``tryLock(_:offset:length:kind:)``, waiting out a conflicting holder that lets go within
    /// about a quarter second: a child forked by another thread that has not yet called `exec`,
    /// or an open in progress that fails and closes its descriptors. A holder that keeps its lock
    /// is still refused.
    package static func lockWaitingOutBriefHolders(
        _ file: FileDescriptor, offset: Int, length: Int, kind: LockKind
    ) throws(SystemError) -> Bool {
        var delay: UInt32 = 500
        for _ in 0..<10 {
            if try tryLock(file, offset: offset, length: length, kind: kind) { return true }
            usleep(delay)
            delay = min(delay * 2, 64_000)
        }
        return try tryLock(file, offset: offset, length: length, kind: kind)
    }

    /// `F_OFD_GETLK` (the same value on every Linux architecture).
    private static let getLockCommand: Int32 = 36

    /// Whether another open file description holds a lock on any of the `length` bytes at
    /// `offset` of `file` (locks of `file`'s own description do not count). Nothing is taken.
    package static func isLockedByOthers(_ file: FileDescriptor, offset: Int, length: Int) throws(SystemError) -> Bool {
        var request = Self.request(Int16(F_WRLCK), offset: offset, length: length)
        _ = try syscall("fcntl(F_OFD_GETLK)", path: file.path) { fcntl(file.rawValue, getLockCommand, &request) }
        return request.l_type != Int16(F_UNLCK)
    }

    /// A lock request of `type` for `length` bytes from `offset` (an OFD lock: no process ID).
    private static func request(_ type: Int16, offset: Int, length: Int) -> Glibc.flock {
        var request = Glibc.flock()
        request.l_type = type
        request.l_whence = Int16(SEEK_SET)
        request.l_start = off_t(offset)
        request.l_len = off_t(length)
        request.l_pid = 0
        return request
    }
}
