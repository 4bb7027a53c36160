import Foundation
import Glibc
import MappedKVIO

/// A mutating operation a child is about to make, as its journal records it before the store call.
enum StressIntent: Equatable, Sendable {
    /// Set the child's key `key` to the value whose ``StressValue/token`` is `token`.
    case set(key: String, token: String)
    /// Remove the child's key `key`.
    case remove(key: String)
    /// Increment the shared counter to `newValue` (written inside the exclusive lock).
    case increment(newValue: Int64)
    /// Trim the store.
    case trim
    /// Put the value of this operation under the shared cache key `key`; `begin` is the
    /// ``StressClock`` time taken before the intent was journalled (the `cache` workload).
    case cachePut(key: String, begin: UInt64)
    /// Remove the shared cache key `key`; `begin` as for ``cachePut(key:begin:)``.
    case cacheRemove(key: String, begin: UInt64)

    /// The key the operation writes, if it is one of the child's own keys.
    var ownKey: String? {
        switch self {
        case .set(let key, _), .remove(let key): key
        case .increment, .trim, .cachePut, .cacheRemove: nil
        }
    }
}

/// One line of a child's journal, `<root>/journal-<child>.log`.
///
/// | Line | Meaning |
/// |---|---|
/// | `S <incarnation> <pid>` | an incarnation of the child started |
/// | `I <opno> set <key> <token>` | about to set a key (``StressValue/token``) |
/// | `I <opno> del <key>` | about to remove a key |
/// | `I <opno> incr <new value>` | about to set the counter (inside the exclusive lock) |
/// | `I <opno> trim` | about to trim the store |
/// | `I <opno> put <key> <time>` | about to put this operation's value under a shared cache key, at ``StressClock`` `time` |
/// | `I <opno> rm <key> <time>` | about to remove a shared cache key |
/// | `A <opno>` | operation `opno` is done: the store call returned (reads have no intent line) |
/// | `A <opno> <time>` | the same, with the ``StressClock`` time taken when the call returned (`cache`) |
/// | `G <opno> <key> <begin> <end> <result>` | a cache get is done: see ``CacheStressRead`` |
/// | `X <opno>` | the in-flight operation `opno` of a killed incarnation turned out not to have happened |
/// | `U <opno>` | the in-flight operation `opno` of a killed incarnation cannot be resolved (counter, trim, cache write) |
/// | `V <text>` | a violation the child saw |
/// | `D` | the child completed all its operations |
enum StressJournalEntry: Equatable, Sendable {
    case start(incarnation: Int, pid: Int32)
    case intent(opno: Int, StressIntent)
    case acknowledged(opno: Int, time: UInt64? = nil)
    case read(CacheStressRead)
    case notApplied(opno: Int)
    case unresolved(opno: Int)
    case violation(String)
    case done

    /// The line, without its newline.
    var line: String {
        switch self {
        case .start(let incarnation, let pid): "S \(incarnation) \(pid)"
        case .intent(let opno, .set(let key, let token)): "I \(opno) set \(key) \(token)"
        case .intent(let opno, .remove(let key)): "I \(opno) del \(key)"
        case .intent(let opno, .increment(let newValue)): "I \(opno) incr \(newValue)"
        case .intent(let opno, .trim): "I \(opno) trim"
        case .intent(let opno, .cachePut(let key, let begin)): "I \(opno) put \(key) \(begin)"
        case .intent(let opno, .cacheRemove(let key, let begin)): "I \(opno) rm \(key) \(begin)"
        case .acknowledged(let opno, nil): "A \(opno)"
        case .acknowledged(let opno, let time?): "A \(opno) \(time)"
        case .read(let read): "G \(read.opno) \(read.key) \(read.begin) \(read.end) \(read.result.word)"
        case .notApplied(let opno): "X \(opno)"
        case .unresolved(let opno): "U \(opno)"
        case .violation(let text): "V " + String(text.map { $0.isNewline ? " " : $0 })
        case .done: "D"
        }
    }

    /// Parses a line (without its newline); nil if it is not a journal line.
    init?(line: Substring) {
        if line.hasPrefix("V ") {
            self = .violation(String(line.dropFirst(2)))
            return
        }
        let words = line.split(separator: " ", omittingEmptySubsequences: false)
        guard let tag = words.first else { return nil }
        func number(_ index: Int) -> Int? { index < words.count ? Int(words[index]) : nil }
        switch (tag, words.count) {
        case ("D", 1): self = .done
        case ("S", 3):
            guard let incarnation = number(1), let pid = Int32(words[2]) else { return nil }
            self = .start(incarnation: incarnation, pid: pid)
        case ("A", 3):
            guard let opno = number(1), let time = UInt64(words[2]) else { return nil }
            self = .acknowledged(opno: opno, time: time)
        case ("G", 6):
            guard let opno = number(1), let begin = UInt64(words[3]), let end = UInt64(words[4]),
                let result = CacheStressRead.Result(word: words[5])
            else { return nil }
            self = .read(CacheStressRead(opno: opno, key: String(words[2]), begin: begin, end: end, result: result))
        case ("A", 2), ("X", 2), ("U", 2):
            guard let opno = number(1) else { return nil }
            self =
                tag == "A" ? .acknowledged(opno: opno) : tag == "X" ? .notApplied(opno: opno) : .unresolved(opno: opno)
        case ("I", 3...):
            guard let opno = number(1) else { return nil }
            switch (words[2], words.count) {
            case ("set", 5): self = .intent(opno: opno, .set(key: String(words[3]), token: String(words[4])))
            case ("del", 4): self = .intent(opno: opno, .remove(key: String(words[3])))
            case ("incr", 4):
                guard let value = Int64(words[3]) else { return nil }
                self = .intent(opno: opno, .increment(newValue: value))
            case ("trim", 3): self = .intent(opno: opno, .trim)
            case ("put", 5), ("rm", 5):
                guard let begin = UInt64(words[4]) else { return nil }
                let key = String(words[3])
                self = .intent(
                    opno: opno,
                    words[2] == "put" ? .cachePut(key: key, begin: begin) : .cacheRemove(key: key, begin: begin))
            default: return nil
            }
        default:
            return nil
        }
    }
}

/// Reading and writing the children's journals.
enum StressJournal {
    /// The journal of child `child` in `root`.
    static func path(root: String, child: Int) -> String { root + "/journal-\(child).log" }

    /// The complete lines of `bytes` parsed, and the complete lines that did not parse. A last line
    /// without its newline (the child was killed while writing it) is ignored.
    static func parse(_ bytes: some Collection<UInt8>) -> (entries: [StressJournalEntry], malformed: [String]) {
        var entries: [StressJournalEntry] = []
        var malformed: [String] = []
        var lines = bytes.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false)
        lines.removeLast()  // the text after the last newline: empty, or a torn line
        for raw in lines {
            let line = String(decoding: raw, as: UTF8.self)
            if let entry = StressJournalEntry(line: line[...]) {
                entries.append(entry)
            } else {
                malformed.append(line)
            }
        }
        return (entries, malformed)
    }

    /// The parsed journal at `path`; an empty journal if there is no file.
    static func read(path: String) throws -> (entries: [StressJournalEntry], malformed: [String]) {
        guard FileManager.default.fileExists(atPath: path) else { return ([], []) }
        return parse(try Data(contentsOf: URL(fileURLWithPath: path)))
    }

    /// The children whose journals are in `root`, by index.
    static func children(in root: String) throws -> [Int] {
        try FileManager.default.contentsOfDirectory(atPath: root).compactMap { name -> Int? in
            guard name.hasPrefix("journal-"), name.hasSuffix(".log") else { return nil }
            return Int(name.dropFirst("journal-".count).dropLast(".log".count))
        }.sorted()
    }
}

/// A child's journal opened for appending: every line goes to the file in one `write(2)` on an
/// `O_APPEND` descriptor, so a kill leaves whole lines and at most one torn last line.
final class StressJournalWriter {
    private let file: FileDescriptor
    /// The journal's path.
    let path: String

    /// Opens (creating) the journal at `path` and cuts off a torn last line left by a killed
    /// incarnation, so the next line starts on a line of its own. Only the child that owns the
    /// journal may call this, and only while no other incarnation of it runs.
    init(path: String) throws(SystemError) {
        self.path = path
        file = try FileDescriptor.open(path, access: .appendCreate)
        do {
            try cutTornLine()
        } catch {
            file.close()
            throw error
        }
    }

    deinit { file.close() }

    /// Appends `entry` as one line.
    func append(_ entry: StressJournalEntry) throws(SystemError) {
        let bytes = Array((entry.line + "\n").utf8)
        let written = try syscall("write", path: path) {
            bytes.withUnsafeBytes { write(file.rawValue, $0.baseAddress, $0.count) }
        }
        // A short write would tear the line: report it rather than retry the rest.
        guard written == bytes.count else { throw SystemError("short write", path: path, errno: EIO) }
    }

    /// Truncates the file after its last newline.
    private func cutTornLine() throws(SystemError) {
        let size = try file.size()
        var keep = size
        while keep > 0 {
            let chunk = min(keep, 4096)
            let bytes = try file.read(count: chunk, at: keep - chunk)
            guard bytes.count == chunk else { throw SystemError("read", path: path, errno: EIO) }
            if let newline = bytes.lastIndex(of: UInt8(ascii: "\n")) {
                keep = keep - chunk + newline + 1
                break
            }
            keep -= chunk
        }
        if keep < size { try file.truncate(to: keep) }
    }
}
