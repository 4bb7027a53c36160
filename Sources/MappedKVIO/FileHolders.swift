// Which processes have a file open: for error messages that name the process in the way.
//
// Invariant: read-only and best effort. It reads /proc and never fails; a process whose
// descriptors this one may not read is simply not listed.

import Glibc

/// Finds the processes that have a file open, through `/proc/<pid>/fd`.
///
/// Open file description locks (the store's mode lock) show no owner in `/proc/locks`, so an error
/// about a lock held elsewhere names the processes that have the locked file open instead. This
/// reads every process's descriptor table: use it on error paths only.
package enum FileHolders {
    /// "another process", with the IDs of the processes that have `path` open when they can be
    /// seen: the subject of an error message about a conflicting opener.
    package static func describe(holding path: String) -> String {
        let holders = processIDs(holding: path)
        return holders.isEmpty
            ? "another process" : "another process (pid \(holders.map(String.init).joined(separator: ", ")))"
    }

    /// The IDs of the other processes that have `path` open, in increasing order; empty when none
    /// can be seen (no `/proc`, or the holders belong to another user).
    package static func processIDs(holding path: String) -> [Int32] {
        guard let target = FileIdentity(path: path), let processes = opendir("/proc") else { return [] }
        defer { closedir(processes) }
        let ownID = getpid()
        var holders: [Int32] = []
        while let entry = readdir(processes) {
            guard let pid = Int32(name(of: entry)), pid != ownID else { continue }
            if holds(pid, target) { holders.append(pid) }
        }
        return holders.sorted()
    }

    /// Whether process `pid` has a descriptor open on the file `target`.
    private static func holds(_ pid: Int32, _ target: FileIdentity) -> Bool {
        let directory = "/proc/\(pid)/fd"
        guard let descriptors = opendir(directory) else { return false }
        defer { closedir(descriptors) }
        while let entry = readdir(descriptors) {
            let name = name(of: entry)
            guard Int(name) != nil else { continue }
            // stat follows the /proc link to the open file itself, even when it was renamed.
            if FileIdentity(path: directory + "/" + name) == target { return true }
        }
        return false
    }

    /// The name in a directory entry.
    private static func name(of entry: UnsafeMutablePointer<dirent>) -> String {
        withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
    }
}
