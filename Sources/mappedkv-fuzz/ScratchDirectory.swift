import Glibc

/// The per-process directory a run writes its store into: `/dev/shm/mappedkv-fuzz-<pid>` when
/// /dev/shm exists (no disk I/O), else under `$TMPDIR` or /tmp. It is emptied before and after
/// every input, and removed at exit.
struct ScratchDirectory: Sendable {
    let path: String

    /// The directory of this process, created on first use.
    static let shared: ScratchDirectory = {
        let base =
            PlainFiles.isDirectory("/dev/shm") && access("/dev/shm", W_OK) == 0
            ? "/dev/shm" : (getenv("TMPDIR").map { String(cString: $0) } ?? "/tmp")
        removeAbandoned(in: base)
        let scratch = ScratchDirectory(path: base + "/" + prefix + "\(getpid())")
        PlainFiles.removeTree(scratch.path)
        PlainFiles.makeDirectory(scratch.path)
        atexit { PlainFiles.removeTree(ScratchDirectory.shared.path) }
        return scratch
    }()

    static let prefix = "mappedkv-fuzz-"

    /// Removes the directories of fuzz processes that died without cleaning up (a crash skips
    /// `atexit`, and `-minimize_crash` crashes many times): `mappedkv-fuzz-<pid>` whose process is gone.
    private static func removeAbandoned(in base: String) {
        for name in PlainFiles.list(base) where name.hasPrefix(prefix) {
            guard let pid = pid_t(name.dropFirst(prefix.count)), pid > 0, pid != getpid() else { continue }
            var status = stat()
            let path = base + "/" + name
            guard lstat(path, &status) == 0, status.st_uid == geteuid() else { continue }
            if kill(pid, 0) != 0 && errno == ESRCH { PlainFiles.removeTree(path) }
        }
    }

    func file(_ name: String) -> String { path + "/" + name }

    /// The names in the directory, sorted.
    var names: [String] { PlainFiles.list(path) }

    /// Removes everything in the directory.
    func clear() {
        for name in names { PlainFiles.removeTree(file(name)) }
    }
}
