import Glibc

/// Directory helpers.
public enum Directory {
    /// Creates `path` and any missing parents with mode 0700; existing directories are fine.
    public static func create(_ path: String) throws(SystemError) {
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
    public static func fileExists(_ path: String) -> Bool {
        var info = stat()
        return stat(path, &info) == 0
    }
}
