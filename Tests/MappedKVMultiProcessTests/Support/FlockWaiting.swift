import Foundation
import Glibc

/// Whether a thread of this process is blocked waiting for a `flock` on the file at `path`: such
/// a wait shows in /proc/locks as a line `N: -> FLOCK ADVISORY WRITE <pid> <major:minor:inode> ...`
/// with this process's ID and the file's inode (so another test's wait on another file does not count).
func isWaitingForFlock(on path: String) -> Bool {
    var info = stat()
    guard stat(path, &info) == 0 else { return false }
    // Read to the end: /proc files report a size of 0, and a whole-file read of one stops after
    // its first page, which the locks of tests running beside this one can fill.
    let data = FileHandle(forReadingAtPath: "/proc/locks").map { $0.readDataToEndOfFile() } ?? Data()
    let locks = String(decoding: data, as: UTF8.self)
    let pid = "\(getpid())"
    return locks.split(separator: "\n").contains { line in
        let fields = line.split(separator: " ")
        guard let arrow = fields.firstIndex(of: "->"), fields.count > arrow + 5 else { return false }
        return fields[arrow + 1] == "FLOCK" && fields[arrow + 4] == pid
            && fields[arrow + 5].hasSuffix(":\(info.st_ino)")
    }
}

/// Polls until a thread of this process waits for a `flock` on `path` (see
/// ``isWaitingForFlock(on:)``) or `seconds` pass; returns whether one does. The pause between
/// polls only spares the CPU: what is waited for is the wait itself.
func waitUntilWaitingForFlock(on path: String, seconds: Double = 30) -> Bool {
    let deadline = Date().addingTimeInterval(seconds)
    while !isWaitingForFlock(on: path), Date() < deadline { usleep(1_000) }
    return isWaitingForFlock(on: path)
}
