import Glibc

/// Directory helpers.
package enum Directory {
    /// Creates `path` and any missing parents with mode 0700; existing directories are fine.
    package static func create(_ path: String) throws(SystemError) {
        var prefix = path.hasPrefix("/") ? "/" : ""
        for component in path.split(separator: "/", omittingEmptySubsequences: true) {
            prefix += component
            if mkdir(prefix, 0o700) != 0 {
                let code = Glibc.errno
                guard code == EEXIST else { throw SystemError("mkdir", path: prefix, errno: code) }
                var info = stat()
                guard stat(prefix, &info) == 0, (info.st_mode & S_IFMT) == S_IFDIR else {
                    throw SystemError("mkdir", path: prefix, errno: ENOTDIR)
                }
            }
            prefix += "/"
        }
    }

    /// Whether a file exists at `path`.
    package static func fileExists(_ path: String) -> Bool {
        var info = stat()
        return stat(path, &info) == 0
    }

    /// The names in the directory at `path` (not `.` or `..`), in no particular order.
    package static func entries(_ path: String) throws(SystemError) -> [String] {
        guard let stream = opendir(path) else { throw SystemError("opendir", path: path, errno: Glibc.errno) }
        defer { closedir(stream) }
        var names: [String] = []
        while let entry = readdir(stream) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix(while: { $0 != 0 }), as: UTF8.self)
            }
            if name != "." && name != ".." { names.append(name) }
        }
        return names
    }

    /// Whether `path` names a regular file (symbolic links followed).
    package static func isRegularFile(_ path: String) -> Bool {
        var info = stat()
        return stat(path, &info) == 0 && (info.st_mode & S_IFMT) == S_IFREG
    }

    /// Whether `path` names a directory (symbolic links followed).
    package static func isDirectory(_ path: String) -> Bool {
        var info = stat()
        return stat(path, &info) == 0 && (info.st_mode & S_IFMT) == S_IFDIR
    }

    /// Flushes the directory at `path` to disk (`fsync` on the directory), so that the names
    /// created, removed or renamed in it survive a power loss.
    package static func synchronize(_ path: String) throws(SystemError) {
        let fd = try syscall("open", path: path) { Glibc.open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC) }
        defer { _ = Glibc.close(fd) }
        _ = try syscall("fsync", path: path) { fsync(fd) }
    }

    /// Renames `source` to `destination`, replacing it atomically if it exists (`rename(2)`).
    package static func rename(_ source: String, to destination: String) throws(SystemError) {
        _ = try syscall("rename", path: source) { Glibc.rename(source, destination) }
    }
}
