import MappedKVIO

// The public form of a failed system call. The I/O layer's own error type stays inside the package;
// every failure that reaches a caller is converted to this type where the store (or a layer above
// it) catches it, so a caller's `catch` never depends on the I/O layer.

/// A system call that failed: which operation, on which file, with which `errno`, and the system's
/// text for that `errno`.
///
/// ``MappedKVError/system(_:)`` carries one, as does the cache's `CacheError.system`.
public struct SystemCallError: Error, Equatable, Hashable, Sendable, CustomStringConvertible {
    /// The system call or operation that failed, e.g. `"open"` or `"ftruncate"`.
    public let operation: String
    /// The file it acted on, when there is one.
    public let path: String?
    /// The `errno` value the call failed with.
    public let errno: Int32
    /// The system's description of `errno` (`strerror`), e.g. "No space left on device".
    public let message: String

    /// An error for `operation` on `path` that failed with `errno`; the message is the system's text for it.
    public init(operation: String, path: String? = nil, errno: Int32) {
        self.init(operation: operation, path: path, errno: errno, message: SystemError.message(for: errno))
    }

    /// An error with the given fields, the message as given.
    public init(operation: String, path: String?, errno: Int32, message: String) {
        self.operation = operation
        self.path = path
        self.errno = errno
        self.message = message
    }

    /// The operation, the path, the message and the `errno` number:
    /// `open /data/prefs: No such file or directory (errno 2)`.
    public var description: String {
        if let path { return "\(operation) \(path): \(message) (errno \(errno))" }
        return "\(operation): \(message) (errno \(errno))"
    }
}

extension SystemCallError {
    /// The public form of an I/O layer error.
    package init(_ error: SystemError) {
        self.init(operation: error.operation, path: error.path, errno: error.errno)
    }
}
