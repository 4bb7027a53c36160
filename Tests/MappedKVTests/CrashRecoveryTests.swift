import Foundation
import MappedKVFormat
import Testing

@testable import MappedKV

/// The files a process killed mid-write leaves behind, built byte by byte, and what the next
/// open makes of them: interrupted write-backs finish from their journal, interrupted appends
/// are completed, and a journal that never took effect is dropped.
@Suite struct CrashRecoveryTests {
    static let keys: [CryptKey?] = [nil, CryptKey(Array("crash-key".utf8))]

    struct Snapshot {
        var data: [UInt8]
        var meta: [UInt8]
        var metaInfo: MetaInfo { (try? MetaInfo(parsing: meta)) ?? MetaInfo() }
    }

    func snapshot(_ dir: TemporaryDirectory) throws -> Snapshot {
        Snapshot(data: try #require(fileBytes(dir.file("s"))), meta: try #require(fileBytes(dir.file("s.crc"))))
    }

    func restore(_ snapshot: Snapshot, _ dir: TemporaryDirectory) throws {
        try writeFile(dir.file("s"), snapshot.data)
        try writeFile(dir.file("s.crc"), snapshot.meta)
    }

    func open(_ dir: TemporaryDirectory, _ key: CryptKey?, readOnly: Bool = false) throws -> MappedKV {
        try MappedKV(id: "s", directory: dir.path, configuration: Configuration(isReadOnly: readOnly, cryptKey: key))
    }

    /// A store grown past one page with many removed keys (state A), and the same store after a
    /// trim (state B: a write-back that shrinks the file), with the journal that write-back writes.
    func writeBackScenario(
        _ dir: TemporaryDirectory, _ key: CryptKey?
    ) throws
        -> (before: Snapshot, after: Snapshot, journal: WriteBackJournal, model: [String: [UInt8]])
    {
        let store = try open(dir, key)
        for i in 0..<60 { try store.set(String(repeating: "v\(i)-", count: 40), forKey: "key-\(i)") }
        for i in 0..<50 { try store.removeValue(forKey: "key-\(i)") }
        let model = try contents(of: store)
        store.close()
        let before = try snapshot(dir)
        let trimmed = try open(dir, key)
        try trimmed.trim()
        trimmed.close()
        let after = try snapshot(dir)
        let newMeta = after.metaInfo
        #expect(after.data.count < before.data.count, "the scenario must shrink the file")
        let journal = WriteBackJournal(
            base: before.metaInfo.stamp, fileSize: UInt64(after.data.count), meta: newMeta,
            region: Array(after.data[4..<(4 + Int(newMeta.actualSize))]))
        return (before, after, journal, model)
    }

    @Test("a write-back killed after its marker is finished from the journal", arguments: keys)
    func interruptedWriteBackIsRedone(key: CryptKey?) throws {
        let dir = TemporaryDirectory("redo")
        let (before, _, journal, model) = try writeBackScenario(dir, key)
        // Killed halfway through the in-place rewrite: half the new region over the old file,
        // the marker sequence in the old meta, the journal complete.
        var torn = before
        let half = journal.region.count / 2
        torn.data.replaceSubrange(4..<(4 + half), with: journal.region[0..<half])
        torn.meta.withUnsafeMutableBytes {
            $0.storeBytes(
                of: journal.markerSequence.littleEndian, toByteOffset: MetaInfo.Offset.sequence, as: UInt32.self)
        }
        try restore(torn, dir)
        try writeFile(dir.file("s.writeback"), journal.serialized)
        // A read-only open cannot finish it, and says so without writing.
        #expect(throws: MappedKVError.corrupted(id: "s", reason: .interruptedWriteBack)) {
            _ = try open(dir, key, readOnly: true)
        }
        #expect(try snapshot(dir).data == torn.data)

        let store = try open(dir, key)
        #expect(try contents(of: store) == model)
        let meta = try snapshot(dir).metaInfo
        #expect(meta.stamp == journal.meta.stamp && meta.iv == journal.meta.iv)
        #expect(!FileManager.default.fileExists(atPath: dir.file("s.writeback")))
        store.close()
        #expect(FileStructure.problems(directory: dir.path, id: "s", key: key).isEmpty)
    }

    @Test("a write-back killed while storing its final meta is finished too", arguments: keys)
    func tornFinalMetaIsRedone(key: CryptKey?) throws {
        let dir = TemporaryDirectory("torn-meta")
        let (before, after, journal, model) = try writeBackScenario(dir, key)
        // The region and the CRC are new, the size, IV and the rest still old, the sequence the marker's.
        var torn = after
        torn.data = before.data
        torn.data.replaceSubrange(4..<(4 + journal.region.count), with: journal.region)
        torn.meta = before.meta
        torn.meta.withUnsafeMutableBytes {
            $0.storeBytes(
                of: journal.meta.crcDigest.littleEndian, toByteOffset: MetaInfo.Offset.crcDigest, as: UInt32.self)
            $0.storeBytes(
                of: journal.markerSequence.littleEndian, toByteOffset: MetaInfo.Offset.sequence, as: UInt32.self)
        }
        try restore(torn, dir)
        try writeFile(dir.file("s.writeback"), journal.serialized)
        #expect(try contents(of: try open(dir, key)) == model)
        #expect(try snapshot(dir).metaInfo == journal.meta)
    }

    @Test("a journal whose write-back never began is dropped, and so is a torn one", arguments: keys)
    func journalWithoutMarkerIsIgnored(key: CryptKey?) throws {
        let dir = TemporaryDirectory("stale")
        let (before, _, journal, model) = try writeBackScenario(dir, key)
        for bytes in [journal.serialized, Array(journal.serialized.dropLast(7))] {
            try restore(before, dir)
            try writeFile(dir.file("s.writeback"), bytes)
            let store = try open(dir, key)
            #expect(try contents(of: store) == model)
            #expect(!FileManager.default.fileExists(atPath: dir.file("s.writeback")))
            store.close()
            #expect(try snapshot(dir).metaInfo.stamp == before.metaInfo.stamp)
        }
    }

    @Test("an append killed between storing the CRC and the size is completed", arguments: keys)
    func interruptedAppendIsCompleted(key: CryptKey?) throws {
        let dir = TemporaryDirectory("append")
        let store = try open(dir, key)
        for i in 0..<20 { try store.set(Int64(i), forKey: "n\(i)") }
        let sizeBefore = try store.actualSize
        try store.set("the last append", forKey: "last")
        let model = try contents(of: store)
        store.close()
        var torn = try snapshot(dir)
        let complete = torn.metaInfo
        torn.meta.withUnsafeMutableBytes {
            $0.storeBytes(
                of: UInt32(sizeBefore).littleEndian, toByteOffset: MetaInfo.Offset.actualSize, as: UInt32.self)
        }
        try restore(torn, dir)
        // Read-only: completed in memory, nothing written.
        #expect(try contents(of: try open(dir, key, readOnly: true)) == model)
        #expect(try snapshot(dir).meta == torn.meta)
        // Read-write: completed on disk.
        #expect(try contents(of: try open(dir, key)) == model)
        #expect(try snapshot(dir).metaInfo == complete)
    }

    @Test("a CRC that matches no record boundary is reported to the handler; .fail changes nothing")
    func unrelatedCRCMismatchIsNotRepaired() throws {
        let dir = TemporaryDirectory("crc")
        let store = try open(dir, nil)
        for i in 0..<20 { try store.set(Int64(i), forKey: "n\(i)") }
        store.close()
        var damaged = try snapshot(dir)
        damaged.data[10] ^= 0x40
        try restore(damaged, dir)
        let events = EventLog()
        #expect(throws: MappedKVError.self) {
            _ = try MappedKV(
                id: "s", directory: dir.path,
                configuration: Configuration(recoveryHandler: {
                    events.append($0)
                    return .fail
                }))
        }
        #expect(events.all.map(\.kind) == [.crcMismatch])
        #expect(try snapshot(dir).data == damaged.data && snapshot(dir).meta == damaged.meta)
    }
}
