import Foundation

/// Resident memory of this process from `/proc/self/status`, in kilobytes.
struct ResidentMemory {
    /// `VmRSS`: everything resident.
    var total: Int
    /// `RssAnon`: heap and other anonymous pages.
    var anonymous: Int
    /// `RssFile`: pages of mapped files (the store's data and meta files, once touched).
    var file: Int

    static func current() throws -> ResidentMemory {
        let text = try readProcFile("/proc/self/status")
        var fields: [Substring: Int] = [:]
        for line in text.split(separator: "\n") {
            let parts = line.split(whereSeparator: { $0 == ":" || $0 == " " || $0 == "\t" })
            if parts.count >= 2, let value = Int(parts[1]) { fields[parts[0]] = value }
        }
        guard let total = fields["VmRSS"], let anonymous = fields["RssAnon"], let file = fields["RssFile"] else {
            throw BenchError("/proc/self/status has no VmRSS, RssAnon or RssFile line")
        }
        return ResidentMemory(total: total, anonymous: anonymous, file: file)
    }

    /// The resident kilobytes of this process's mappings of files whose path starts with `prefix`
    /// (`Rss:` of each such mapping in `/proc/self/smaps`).
    static func mappedKiB(ofFilesWithPrefix prefix: String) throws -> Int {
        let text = try readProcFile("/proc/self/smaps")
        var total = 0
        var inside = false
        for line in text.split(separator: "\n") {
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            guard let first = fields.first else { continue }
            if first.contains("-"), first.allSatisfy({ $0.isHexDigit || $0 == "-" }) {
                // A mapping's header: range, permissions, offset, device, inode, path.
                inside = fields.count >= 6 && fields[5].hasPrefix(prefix)
            } else if inside, first == "Rss:", fields.count >= 2, let kilobytes = Int(fields[1]) {
                total += kilobytes
            }
        }
        return total
    }

    /// The kilobytes of this process's pages no other process maps, anonymous or file-backed
    /// (`Private_Clean` plus `Private_Dirty` in `/proc/self/smaps_rollup`): what the process adds to
    /// the machine beyond pages it shares, such as another process's copy of a store's files.
    ///
    /// The two apart: `clean` is mostly pages of mapped files that only this process maps (page
    /// cache the kernel may drop), `dirty` mostly the process's anonymous pages.
    static func privateKiB() throws -> (clean: Int, dirty: Int) {
        let text = try readProcFile("/proc/self/smaps_rollup")
        var clean: Int?
        var dirty: Int?
        for line in text.split(separator: "\n") {
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            guard fields.count >= 2, let kilobytes = Int(fields[1]) else { continue }
            if fields[0] == "Private_Clean:" { clean = kilobytes }
            if fields[0] == "Private_Dirty:" { dirty = kilobytes }
        }
        guard let clean, let dirty else {
            throw BenchError("/proc/self/smaps_rollup has no Private_Clean or Private_Dirty line")
        }
        return (clean, dirty)
    }

    /// The whole text of a /proc file. They report a size of 0, so this reads until end of file
    /// (Foundation's `String(contentsOfFile:)` stops after the first read of /proc/self/smaps).
    private static func readProcFile(_ path: String) throws -> String {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw BenchError("cannot open \(path): errno \(errno)") }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65_536)
        while true {
            let count = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if count == 0 { break }
            if count < 0 {
                if errno == EINTR { continue }
                throw BenchError("cannot read \(path): errno \(errno)")
            }
            bytes.append(contentsOf: chunk[0..<count])
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    static func - (lhs: ResidentMemory, rhs: ResidentMemory) -> ResidentMemory {
        ResidentMemory(
            total: lhs.total - rhs.total, anonymous: lhs.anonymous - rhs.anonymous, file: lhs.file - rhs.file)
    }
}
