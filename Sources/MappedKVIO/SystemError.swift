import Glibc

/// A failed system call: the call's name, the path it acted on, and `errno`.
@usableFromInline package struct SystemError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The system call or operation that failed, e.g. `"open"`.
    package var operation: String
    /// The file it acted on, when there is one.
    package var path: String?
    /// The `errno` value.
    package var errno: Int32

    /// Creates an error for `operation` on `path` with the given `errno`.
    @usableFromInline package init(_ operation: String, path: String? = nil, errno: Int32) {
        self.operation = operation
        self.path = path
        self.errno = errno
    }

    /// The operation, the path, the `strerror` text and the `errno` number.
    @usableFromInline package var description: String {
        let reason = Self.message(for: errno)
        if let path { return "\(operation) \(path): \(reason) (errno \(errno))" }
        return "\(operation): \(reason) (errno \(errno))"
    }

    /// The system's text for `code` (`strerror`).
    package static func message(for code: Int32) -> String {
        String(cString: strerror(code))
    }
}
