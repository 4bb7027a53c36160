import Foundation
import Glibc
import MappedKVFormat
import MappedKVIO
import Testing

@testable import MappedKV

/// The index file (docs/FORMAT.md 12): an open adopts it only when it describes the log as it is,
/// or the log with records appended after it, and a damaged, truncated, deleted, foreign or stale
/// file costs a decode, never a wrong value.
@Suite("Index file")
struct IndexFileTests {
    // Multi-process with `flock`: such a store keeps its private copy (a store MMKV may share),
    // so these opens adopt the file; the single-process opens of ``MappedReadsTests`` map it.
    static let withIndex = Configuration(isMultiProcess: true)
    static let withoutIndex = Configuration(isMultiProcess: true, usesIndexFile: false)

    /// How the open of `store` got its index.
    static func outcome(_ store: MappedKV) -> IndexedLoad.Outcome {
        store.shared.core.withLock { $0.findings.indexOutcome }
    }

    /// Every key of `model` holds its value in `store`, and `store` holds no other key.
    static func expectMatches(_ store: MappedKV, _ model: [String: Int64], _ context: String) throws {
        #expect(try store.count == model.count, "\(context)")
        for (key, value) in model { #expect(try store.int64(forKey: key) == value, "\(context): \(key)") }
        #expect(try Set(store.allKeys) == Set(model.keys), "\(context)")
    }

    @Test("a close writes the file and the next open adopts it, after sets, removals and growth")
    func adoptsAfterClose() throws {
        let dir = TemporaryDirectory("index-adopt")
        var model: [String: Int64] = [:]
        for round in 0..<3 {
            let store = try MappedKV(id: "s", directory: dir.path, configuration: Self.withIndex)
            if round > 0 { #expect(Self.outcome(store) == .adopted, "round \(round)") }
            try Self.expectMatches(store, model, "round \(round) after open")
            for i in 0..<(2_000 * (round + 1)) {
                let key = "k\(i % 3_000)"
                if i % 7 == 3 {
                    try store.removeValue(forKey: key)
                    model[key] = nil
                } else {
                    try store.set(Int64(i * 10 + round), forKey: key)
                    model[key] = Int64(i * 10 + round)
                }
            }
            store.close()
            #expect(FileManager.default.fileExists(atPath: dir.file("s.index")))
        }
        let store = try MappedKV(id: "s", directory: dir.path, configuration: Self.withIndex)
        #expect(Self.outcome(store) == .adopted)
        try Self.expectMatches(store, model, "final")
    }

    @Test("records appended by a process that keeps no index file are decoded after the adopted index")
    func adoptsWithTail() throws {
        let dir = TemporaryDirectory("index-tail")
        var model: [String: Int64] = [:]
        let first = try MappedKV(id: "s", directory: dir.path, configuration: Self.withIndex)
        for i in 0..<500 {
            try first.set(Int64(i), forKey: "k\(i)")
            model["k\(i)"] = Int64(i)
        }
        first.close()
        let plain = try MappedKV(id: "s", directory: dir.path, configuration: Self.withoutIndex)
        for i in 400..<420 {
            try plain.set(Int64(-i), forKey: "k\(i)")
            model["k\(i)"] = Int64(-i)
        }
        try plain.removeValue(forKey: "k7")
        model["k7"] = nil
        plain.close()
        let store = try MappedKV(id: "s", directory: dir.path, configuration: Self.withIndex)
        #expect(Self.outcome(store) == .adoptedWithTail(records: 21))
        try Self.expectMatches(store, model, "after the tail")
    }

    @Test("a log rewritten since the file was written is decoded, and the file is written again")
    func staleAfterRewrite() throws {
        let dir = TemporaryDirectory("index-stale")
        let first = try MappedKV(id: "s", directory: dir.path, configuration: Self.withIndex)
        for i in 0..<3_000 { try first.set(Int64(i), forKey: "k\(i)") }
        first.close()
        let plain = try MappedKV(id: "s", directory: dir.path, configuration: Self.withoutIndex)
        for i in 0..<3_000 where i % 2 == 0 { try plain.removeValue(forKey: "k\(i)") }
        let sequence = try plain.info().meta.sequence
        try plain.trim()
        #expect(try plain.info().meta.sequence > sequence, "trim rewrote the log")
        plain.close()
        let store = try MappedKV(id: "s", directory: dir.path, configuration: Self.withIndex)
        #expect(Self.outcome(store) == .decoded)
        #expect(try store.count == 1_500)
        #expect(try store.int64(forKey: "k0") == nil)
        #expect(try store.int64(forKey: "k2999") == 2_999)
        store.close()
        let again = try MappedKV(id: "s", directory: dir.path, configuration: Self.withIndex)
        #expect(Self.outcome(again) == .adopted)
        #expect(try again.count == 1_500)
    }

    @Test("with the index file off, the store is its two files and a file left beside it is not read")
    func offMeansTwoFiles() throws {
        let dir = TemporaryDirectory("index-off")
        let store = try MappedKV(id: "s", directory: dir.path, configuration: Self.withoutIndex)
        for i in 0..<100 { try store.set(Int64(i), forKey: "k\(i)") }
        store.close()
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.path).sorted() == ["s", "s.crc"])
        let indexed = try MappedKV(id: "s", directory: dir.path, configuration: Self.withIndex)
        indexed.close()
        let reopened = try MappedKV(id: "s", directory: dir.path, configuration: Self.withoutIndex)
        #expect(Self.outcome(reopened) == .decoded)
        #expect(try reopened.count == 100)
    }

    @Test("an encrypted store's file hides its hash seed, and a wrong key is refused as before")
    func encrypted() throws {
        let dir = TemporaryDirectory("index-encrypted")
        let key = try #require(CryptKey(Array("index-file-key".utf8)))
        let configuration = Configuration(cryptKey: key)
        let store = try MappedKV(id: "s", directory: dir.path, configuration: configuration)
        for i in 0..<400 { try store.set("value \(i)", forKey: "k\(i)") }
        let seed = store.shared.core.withLock { $0.loaded.index.hasher.storedSeed }
        store.close()
        let header = try #require(fileBytes(dir.file("s.index"))).withUnsafeBytes { try IndexFileHeader(parsing: $0) }
        #expect(header.flags.contains(.encrypted))
        #expect(header.seed != seed, "the stored seed is masked with a value derived from the key")
        // Single-process, the store reads through its mappings (FORMAT.md 12.6); shared through
        // `flock`, it adopts the buckets for its private copy.
        let reopened = try MappedKV(id: "s", directory: dir.path, configuration: configuration)
        #expect(Self.outcome(reopened) == .mapped)
        #expect(try reopened.string(forKey: "k399") == "value 399")
        reopened.close()
        var shared = configuration
        shared.isMultiProcess = true
        let adopted = try MappedKV(id: "s", directory: dir.path, configuration: shared)
        #expect(Self.outcome(adopted) == .adopted)
        #expect(try adopted.string(forKey: "k399") == "value 399")
        adopted.close()
        #expect(throws: MappedKVError.self) {
            _ = try MappedKV(
                id: "s", directory: dir.path, configuration: Configuration(cryptKey: CryptKey(Array("wrong".utf8))))
        }
        #expect(throws: MappedKVError.self) { _ = try MappedKV(id: "s", directory: dir.path) }
    }

    @Test("damage to the data behind a good index file is found as it is without one")
    func dataDamageStillFound() throws {
        let dir = TemporaryDirectory("index-data-damage")
        let store = try MappedKV(id: "s", directory: dir.path, configuration: Self.withIndex)
        for i in 0..<200 { try store.set(Int64(i), forKey: "k\(i)") }
        store.close()
        var data = try #require(fileBytes(dir.file("s")))
        data[100] ^= 0x40
        try writeFile(dir.file("s"), data)
        #expect(throws: MappedKVError.self) {
            _ = try MappedKV(
                id: "s", directory: dir.path, configuration: Configuration(recoveryHandler: { _ in .fail }))
        }
    }

    @Test("a multi-process trim replaces a large file before it returns; no temporary file stays, nor the old file")
    func largeFileReplacedByTrim() throws {
        let dir = TemporaryDirectory("index-replaced")
        let keys = 100_000  // buckets of more than ReplacedFile.minimumSize bytes
        let first = try MappedKV(id: "s", directory: dir.path, configuration: Self.withIndex)
        for i in 0..<keys { try first.set(Int64(i), forKey: "k\(i)") }
        first.close()
        let store = try MappedKV(id: "s", directory: dir.path, configuration: Self.withIndex)
        for i in stride(from: 0, to: keys, by: 10) { try store.set(Int64(-i), forKey: "k\(i)") }
        let path = dir.file("s.index")
        let old = try #require(FileIdentity(path: path))
        #expect(try #require(fileBytes(path)).count > ReplacedFile.minimumSize)
        try store.trim()
        #expect(FileIdentity(path: path) != old)
        let header = try #require(fileBytes(path)).withUnsafeBytes { try IndexFileHeader(parsing: $0) }
        let meta = try store.info().meta
        let stamp = MetaStamp(sequence: meta.sequence, crcDigest: meta.crcDigest, actualSize: meta.actualSize)
        #expect(header.stamp == stamp, "the file describes the rewritten region")
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.path).sorted() == ["s", "s.crc", "s.index"])
        // The old file, held open across the rename, is closed on a thread of its own.
        let deadline = Date().addingTimeInterval(30)
        while try Self.isOpen(old), Date() < deadline { usleep(1_000) }
        #expect(try !Self.isOpen(old))
        store.close()
        let reopened = try MappedKV(id: "s", directory: dir.path, configuration: Self.withIndex)
        #expect(Self.outcome(reopened) == .adopted)
        #expect(try reopened.int64(forKey: "k10") == -10)
        #expect(try reopened.int64(forKey: "k11") == 11)
    }

    /// Whether this process has a descriptor open on the file of `identity`, which has no name left.
    static func isOpen(_ identity: FileIdentity) throws -> Bool {
        try FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").contains { name in
            var info = stat()
            guard let fd = Int32(name), fstat(fd, &info) == 0 else { return false }
            return info.st_nlink == 0 && UInt64(info.st_dev) == identity.device && UInt64(info.st_ino) == identity.inode
        }
    }

    @Test("removing a store removes its index file")
    func removal() throws {
        let dir = TemporaryDirectory("index-remove")
        let store = try MappedKV(id: "s", directory: dir.path, configuration: Self.withIndex)
        try store.set(Int64(1), forKey: "k")
        store.close()
        #expect(FileManager.default.fileExists(atPath: dir.file("s.index")))
        #expect(try MappedKV.removeStore(id: "s", directory: dir.path))
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.path).isEmpty)
    }
}
