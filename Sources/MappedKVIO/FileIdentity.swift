import Glibc

/// A file's device and inode numbers: the same file under any path.
package struct FileIdentity: Hashable, Sendable {
    /// The device number.
    package let device: UInt64
    /// The inode number.
    package let inode: UInt64

    /// The identity of the file at `path`, or nil if there is none (or it cannot be examined).
    package init?(path: String) {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        device = UInt64(info.st_dev)
        inode = UInt64(info.st_ino)
    }

    /// The identity of an open file.
    package init(_ file: FileDescriptor) throws(SystemError) {
        var info = stat()
        _ = try syscall("fstat", path: file.path) { fstat(file.rawValue, &info) }
        device = UInt64(info.st_dev)
        inode = UInt64(info.st_ino)
    }
}
