import Glibc

/// Whole-file reads and writes, directory listings and removal with plain system calls, so the
/// harness checks the store's files without going through the store's own I/O layer.
///
/// A failure here is the environment's, not a finding: it stops the run with ``harnessFailure(_:)``.
enum PlainFiles {
    /// The bytes of the file at `path`, or nil if there is none.
    static func read(_ path: String) -> [UInt8]? {
        let fd = retrying { open(path, O_RDONLY | O_CLOEXEC) }
        guard fd >= 0 else {
            if errno == ENOENT { return nil }
            harnessFailure("cannot open \(path): \(describe(errno))")
        }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = chunk.withUnsafeMutableBytes { buffer in
                retrying { Glibc.read(fd, buffer.baseAddress, buffer.count) }
            }
            guard count >= 0 else { harnessFailure("cannot read \(path): \(describe(errno))") }
            if count == 0 { return bytes }
            bytes += chunk[..<count]
        }
    }

    /// Creates or replaces the file at `path` with `bytes`.
    static func write(_ bytes: [UInt8], to path: String) {
        let fd = retrying { open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600) }
        guard fd >= 0 else { harnessFailure("cannot create \(path): \(describe(errno))") }
        defer { close(fd) }
        var written = 0
        while written < bytes.count {
            let count = bytes.withUnsafeBytes { buffer in
                retrying { Glibc.write(fd, buffer.baseAddress.map { $0 + written }, buffer.count - written) }
            }
            guard count > 0 else { harnessFailure("cannot write \(path): \(describe(errno))") }
            written += count
        }
    }

    /// The names in the directory at `path`, sorted, without `.` and `..`; empty if it does not exist.
    static func list(_ path: String) -> [String] {
        guard let directory = opendir(path) else {
            if errno == ENOENT { return [] }
            harnessFailure("cannot list \(path): \(describe(errno))")
        }
        defer { closedir(directory) }
        var names: [String] = []
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
            if name != "." && name != ".." { names.append(name) }
        }
        return names.sorted()
    }

    /// Whether `path` names a directory (not following a final symbolic link).
    static func isDirectory(_ path: String) -> Bool {
        var status = stat()
        return lstat(path, &status) == 0 && status.st_mode & S_IFMT == S_IFDIR
    }

    /// Removes `path` and, for a directory, everything in it. A missing path is not an error.
    static func removeTree(_ path: String) {
        if isDirectory(path) {
            for name in list(path) { removeTree(path + "/" + name) }
            guard rmdir(path) == 0 || errno == ENOENT else {
                harnessFailure("cannot remove \(path): \(describe(errno))")
            }
        } else {
            guard unlink(path) == 0 || errno == ENOENT else {
                harnessFailure("cannot remove \(path): \(describe(errno))")
            }
        }
    }

    /// Creates the directory `path` (mode 0700) unless it exists.
    static func makeDirectory(_ path: String) {
        guard mkdir(path, 0o700) == 0 || errno == EEXIST else {
            harnessFailure("cannot create \(path): \(describe(errno))")
        }
    }

    private static func retrying<T: BinaryInteger>(_ call: () -> T) -> T {
        while true {
            let result = call()
            if result >= 0 || errno != EINTR { return result }
        }
    }

    private static func describe(_ code: Int32) -> String {
        String(cString: strerror(code)) + " (errno \(code))"
    }
}
