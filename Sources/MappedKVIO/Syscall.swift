import Glibc

/// Runs a system call that reports failure as -1 and `errno`, retrying while it fails with `EINTR`.
///
/// - Returns: the call's non-negative result.
/// - Throws: ``SystemError`` for any other failure.
@inlinable
package func syscall<T: FixedWidthInteger>(
    _ operation: String, path: String? = nil, _ body: () -> T
) throws(SystemError) -> T {
    while true {
        let result = body()
        if result != -1 { return result }
        let code = Glibc.errno
        if code == EINTR { continue }
        throw SystemError(operation, path: path, errno: code)
    }
}

/// Runs a call that returns an error number directly (like `posix_fallocate`), retrying on `EINTR`.
@inlinable
package func syscallReturningErrno(
    _ operation: String, path: String? = nil, _ body: () -> Int32
) throws(SystemError) {
    while true {
        let code = body()
        if code == 0 { return }
        if code == EINTR { continue }
        throw SystemError(operation, path: path, errno: code)
    }
}
