import Foundation

@testable import MappedKV

/// The bytes of a store's three files (data, meta, write-back journal) as a replay of recorded
/// writes leaves them: what a process killed at that point leaves in the page cache.
struct FileImage: Equatable {
    var data: [UInt8] = []
    var meta: [UInt8] = []
    /// The journal's bytes, or nil if there is no journal file.
    var journal: [UInt8]?
    /// The data or meta file's name did not reach the disk (a power loss before the directory
    /// was flushed after the store's creation).
    var dataMissing = false
    var metaMissing = false
    /// The files of a layer on top (a cache's value files), by path relative to the directory.
    var others: [String: [UInt8]] = [:]

    /// Applies `write`, or only its first `byteCount` bytes (a store or `write` cut by a kill).
    mutating func apply(_ write: FileWrite, byteCount: Int? = nil) {
        switch write {
        case .data(let offset, let bytes): Self.store(bytes, at: offset, into: &data, count: byteCount)
        case .meta(let offset, let bytes): Self.store(bytes, at: offset, into: &meta, count: byteCount)
        case .dataSize(let size): Self.resize(&data, to: size)
        case .metaSize(let size): Self.resize(&meta, to: size)
        case .journal(let bytes): journal = Array(bytes.prefix(byteCount ?? bytes.count))
        case .journalRemoved: journal = nil
        case .file(let name, let offset, let bytes):
            var file = others[name] ?? []
            if file.count < offset + bytes.count {
                file += [UInt8](repeating: 0, count: offset + bytes.count - file.count)
            }
            let length = byteCount ?? bytes.count
            file.replaceSubrange(offset..<(offset + length), with: bytes.prefix(length))
            others[name] = file
        case .renamed(let source, let target): others[target] = others.removeValue(forKey: source)
        case .removed(let name): others[name] = nil
        case .sync, .syncFile, .syncFolder: break
        }
    }

    private static func store(_ bytes: [UInt8], at offset: Int, into file: inout [UInt8], count: Int?) {
        let length = count ?? bytes.count
        precondition(offset + length <= file.count, "a recorded write past the end of its file")
        file.replaceSubrange(offset..<(offset + length), with: bytes.prefix(length))
    }

    private static func resize(_ file: inout [UInt8], to size: Int) {
        if size < file.count {
            file.removeLast(file.count - size)
        } else {
            file += [UInt8](repeating: 0, count: size - file.count)
        }
    }

    /// Writes the image as store `id` in `directory`, replacing whatever is there.
    func materialize(id: String, in directory: String) throws {
        for (missing, bytes, path) in [
            (dataMissing, data, "\(directory)/\(id)"), (metaMissing, meta, "\(directory)/\(id).crc"),
        ] {
            if !missing {
                try Data(bytes).write(to: URL(fileURLWithPath: path))
            } else if FileManager.default.fileExists(atPath: path) {
                try FileManager.default.removeItem(atPath: path)
            }
        }
        for (name, bytes) in others {
            let path = "\(directory)/\(name)"
            try FileManager.default.createDirectory(
                atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
            try Data(bytes).write(to: URL(fileURLWithPath: path))
        }
        let journalPath = "\(directory)/\(id).writeback"
        if let journal {
            try Data(journal).write(to: URL(fileURLWithPath: journalPath))
        } else if FileManager.default.fileExists(atPath: journalPath) {
            try FileManager.default.removeItem(atPath: journalPath)
        }
    }

    /// The ways a kill can cut `write` short: every byte split of a multi-byte store into the
    /// meta, a few splits of data stores and journal writes (first byte, half, all but one).
    static func tornSplits(of write: FileWrite) -> [Int] {
        switch write {
        case .meta(_, let bytes) where bytes.count > 4: Array(1..<bytes.count)
        case .data(_, let bytes) where bytes.count > 1, .journal(let bytes) where bytes.count > 1:
            Array(Set([1, bytes.count / 2, bytes.count - 1])).sorted()
        default: []
        }
    }
}

/// A recorded workload: the writes the store made, and after which write each operation was
/// acknowledged, with the store's contents then.
struct RecordedWorkload {
    var writes: [FileWrite]
    /// `acknowledgedAt[i]` is the number of writes made when operation `i` returned;
    /// `states[i + 1]` the contents after it (`states[0]`: after the open).
    var acknowledgedAt: [Int]
    var states: [[String: [UInt8]]]

    /// Every payload each key ever held.
    var history: [String: Set<[UInt8]>] {
        var result: [String: Set<[UInt8]>] = [:]
        for state in states { for (key, value) in state { result[key, default: []].insert(value) } }
        return result
    }

    /// How many operations had returned once `writeCount` writes were made.
    func acknowledgedOperations(afterWrites writeCount: Int) -> Int {
        acknowledgedAt.prefix { $0 <= writeCount }.count
    }

    /// Runs `operations` random operations on a fresh store in `directory`, recording every write.
    static func record(
        in directory: String, key: CryptKey?, seed: UInt64, operations: Int
    ) throws -> RecordedWorkload {
        let dataPath = "\(directory)/s"
        let recorder = WriteRecorder()
        WriteRecorder.register(recorder, for: dataPath)
        defer { WriteRecorder.unregister(dataPath) }
        var random = SplitMix64(seed: seed)
        let store = try MappedKV(id: "s", directory: directory, configuration: Configuration(cryptKey: key))
        var workload = RecordedWorkload(writes: [], acknowledgedAt: [], states: [try contents(of: store)])
        for step in 0..<operations {
            let key = "key-\(random.next() % 24)"
            switch random.next() % 20 {
            case 0..<11:
                let length = Int(random.next() % 300) + 1
                try store.set("v\(step)-" + String(repeating: "x", count: length), forKey: key)
            case 11..<15: try store.set(Int64(bitPattern: random.next()), forKey: key)
            case 15..<18: try store.removeValue(forKey: key)
            case 18: try store.trim()
            default: if random.next() % 4 == 0 { try store.clearAll() } else { try store.set(true, forKey: key) }
            }
            workload.acknowledgedAt.append(recorder.count)
            workload.states.append(try contents(of: store))
        }
        store.close()
        workload.writes = recorder.writes
        return workload
    }
}
