import Glibc

/// A failed system call: the call's name, the path it acted on, and `errno`.
public struct SystemError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The system call or operation that failed, e.g. `"open"`.
    public var operation: String
    /// The file it acted on, when there is one.
    public var path: String?
    /// The `errno` value.
    public var errno: Int32

    /// Creates an error for `operation` on `path` with the given `errno`.
    public init(_ operation: String, path: String? = nil, errno: Int32) {
        self.operation = operation
        self.path = path
        self.errno = errno
    }

    /// The operation, the path, the `strerror` text and the `errno` number.
    public var description: String {
        let reason = String(cString: strerror(errno))
        if let path { return "\(operation) \(path): \(reason) (errno \(errno))" }
        return "\(operation): \(reason) (errno \(errno))"
    }
}
