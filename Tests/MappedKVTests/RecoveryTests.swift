import Foundation
import MappedKVFormat
import Testing

@testable import MappedKV

/// What each recovery decision does, case by case.
@Suite("Recovery")
struct RecoveryTests {
    /// A store with a full write-back of `a0...a9` (the last confirmed state) followed by appends
    /// of `b0...b4` (`beforeLast`) and a new value for `a0` (`full`), closed: `full` is its last
    /// durability point.
    func storeWithAppendsAfterWriteBack(
        _ dir: TemporaryDirectory, key: CryptKey? = nil
    ) throws -> (confirmed: [String: [UInt8]], full: [String: [UInt8]]) {
        let states = try statesOfStoreWithAppendsAfterWriteBack(dir, key: key)
        return (states.confirmed, states.full)
    }

    func statesOfStoreWithAppendsAfterWriteBack(
        _ dir: TemporaryDirectory, key: CryptKey? = nil
    ) throws -> (confirmed: [String: [UInt8]], beforeLast: [String: [UInt8]], full: [String: [UInt8]]) {
        let store = try MappedKV(id: "s", directory: dir.path, configuration: Configuration(cryptKey: key))
        for i in 0..<10 { try store.set("first-\(i)", forKey: "a\(i)") }
        try store.rekey(to: key)  // a full write-back: lastConfirmed = this state
        let confirmed = try contents(of: store)
        for i in 0..<5 { try store.set("later-\(i)", forKey: "b\(i)") }
        let beforeLast = try contents(of: store)
        try store.set("changed", forKey: "a0")
        let full = try contents(of: store)
        store.close()
        return (confirmed, beforeLast, full)
    }

    /// Removes the checkpoints MappedKV keeps past MMKV's struct, as a store MMKV wrote has none.
    func dropCheckpoints(_ dir: TemporaryDirectory) throws {
        var meta = try #require(fileBytes(dir.file("s.crc")))
        meta.replaceSubrange(
            DurabilityCheckpoints.Offset.magic..<DurabilityCheckpoints.end,
            with: [UInt8](repeating: 0, count: DurabilityCheckpoints.end - DurabilityCheckpoints.Offset.magic))
        try writeFile(dir.file("s.crc"), meta)
    }

    func open(
        _ dir: TemporaryDirectory, key: CryptKey? = nil, readOnly: Bool = false, events: EventLog,
        decision: RecoveryDecision? = nil
    ) throws -> MappedKV {
        try MappedKV(
            id: "s", directory: dir.path,
            configuration: Configuration(
                isReadOnly: readOnly, cryptKey: key,
                recoveryHandler: { event in
                    events.append(event)
                    return decision ?? .default(for: event)
                }))
    }

    func quarantined(_ dir: TemporaryDirectory) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: dir.path).filter { $0.hasPrefix("s.corrupt-") }.sorted()
    }

    @Test(
        "by default a CRC mismatch keeps the longest verified prefix (a recorded checkpoint), keeping a copy of both files",
        arguments: [false, true])
    func defaultRecoveryKeepsTheLastCheckpoint(encrypted: Bool) throws {
        let dir = TemporaryDirectory("recover-checkpoint")
        let key = encrypted ? CryptKey(Array("k".utf8)) : nil
        let (confirmed, beforeLast, full) = try statesOfStoreWithAppendsAfterWriteBack(dir, key: key)
        var data = try #require(fileBytes(dir.file("s")))
        let meta = try #require(fileBytes(dir.file("s.crc")))
        let stored = try MetaInfo(parsing: meta)
        data[4 + Int(stored.actualSize) - 1] ^= 0x01  // inside the last append, before the durability point
        try writeFile(dir.file("s"), data)

        let events = EventLog()
        let store = try open(dir, key: key, events: events)
        #expect(try contents(of: store) == beforeLast)
        let event = try #require(events.all.first)
        #expect(event.kind == .crcMismatch)
        #expect(event.proposal.basis == .checkpoint)
        #expect(event.proposal.keptKeys == beforeLast.count)
        #expect(beforeLast != confirmed && beforeLast != full)
        #expect(store.crashLossReport == nil)
        store.close()
        #expect(try quarantined(dir).count == 2)
    }

    @Test(
        "without checkpoints (a store MMKV wrote) a CRC mismatch rolls back to the last confirmed write-back, keeping a copy of both files",
        arguments: [false, true])
    func defaultRecovery(encrypted: Bool) throws {
        let dir = TemporaryDirectory("recover")
        let key = encrypted ? CryptKey(Array("k".utf8)) : nil
        let (confirmed, full) = try storeWithAppendsAfterWriteBack(dir, key: key)
        try dropCheckpoints(dir)
        var data = try #require(fileBytes(dir.file("s")))
        let meta = try #require(fileBytes(dir.file("s.crc")))
        let stored = try MetaInfo(parsing: meta)
        let lastByte = 4 + Int(stored.actualSize) - 1
        data[lastByte] ^= 0x01  // inside the last append
        try writeFile(dir.file("s"), data)

        let events = EventLog()
        let store = try open(dir, key: key, events: events)
        #expect(try contents(of: store) == confirmed)
        let event = try #require(events.all.first)
        #expect(events.all.count == 1)
        #expect(event.kind == .crcMismatch)
        #expect(event.proposal.basis == .lastConfirmed)
        #expect(event.proposal.keptKeys == confirmed.count)
        #expect(event.proposal.keptBytes == Int(stored.lastConfirmedActualSize))
        #expect(event.proposal.droppedKeys.contains("b0") && event.proposal.droppedKeys.contains("a0"))
        let report = try #require(store.recoveryReport)
        #expect(report.decision == .recover)
        #expect(full != confirmed)
        store.close()

        // Both damaged files were copied aside byte for byte, and the copy is itself a store ID.
        let copies = try quarantined(dir)
        #expect(copies.count == 2)
        #expect(report.quarantinedFiles.map { ($0 as NSString).lastPathComponent }.sorted() == copies)
        #expect(fileBytes(report.quarantinedFiles[0]) == data)
        #expect(fileBytes(report.quarantinedFiles[1]) == meta)

        // The recovered store is sound: it reopens without a report, and takes writes.
        let again = EventLog()
        let reopened = try open(dir, key: key, events: again, decision: .fail)
        #expect(try contents(of: reopened) == confirmed)
        #expect(again.all.isEmpty)
        try reopened.set("after", forKey: "new")
        reopened.close()
        #expect(
            try StoreInspector.inspect(
                location: try StoreLocation(id: "s", directory: dir.path),
                dataFile: fileBytes(dir.file("s")), metaFile: fileBytes(dir.file("s.crc")),
                cryptKey: key
            ).isSound)
    }

    @Test(".fail throws, changes nothing and copies nothing; .discard empties the store after copying it")
    func failAndDiscard() throws {
        let dir = TemporaryDirectory("discard")
        _ = try storeWithAppendsAfterWriteBack(dir)
        var data = try #require(fileBytes(dir.file("s")))
        data[8] ^= 0xFF  // inside the confirmed part: nothing can be verified
        try writeFile(dir.file("s"), data)
        let meta = fileBytes(dir.file("s.crc"))

        let events = EventLog()
        let error = #expect(throws: MappedKVError.self) { _ = try open(dir, events: events, decision: .fail) }
        guard case .corrupted(_, .crcMismatch)? = error else {
            Issue.record("expected a CRC mismatch, got \(String(describing: error))")
            return
        }
        #expect(events.all.first?.proposal.basis == RecoveryProposal.Basis.nothing)
        #expect(fileBytes(dir.file("s")) == data && fileBytes(dir.file("s.crc")) == meta)
        #expect(try quarantined(dir).isEmpty)

        let store = try open(dir, events: events, decision: .discard)
        #expect(try store.count == 0)
        #expect(store.recoveryReport?.decision == .discard)
        store.close()
        #expect(try quarantined(dir).count == 2)
    }

    @Test("a read-only open recovers in memory only")
    func readOnlyRecoversInMemory() throws {
        let dir = TemporaryDirectory("readonly")
        let (_, confirmed, _) = try statesOfStoreWithAppendsAfterWriteBack(dir)
        var data = try #require(fileBytes(dir.file("s")))
        let meta = try #require(fileBytes(dir.file("s.crc")))
        data[4 + Int(try MetaInfo(parsing: meta).actualSize) - 2] ^= 0x10
        try writeFile(dir.file("s"), data)
        let events = EventLog()
        let store = try open(dir, readOnly: true, events: events)
        #expect(try contents(of: store) == confirmed)
        #expect(events.all.first?.isReadOnly == true)
        #expect(store.recoveryReport?.quarantinedFiles == [])
        store.close()
        #expect(fileBytes(dir.file("s")) == data && fileBytes(dir.file("s.crc")) == meta)
        #expect(try quarantined(dir).isEmpty)
    }

    @Test("a meta whose CRC covers the header's size loads silently with it (MMKV's downgrade-and-upgrade case)")
    func headerSize() throws {
        let dir = TemporaryDirectory("header")
        let (_, full) = try storeWithAppendsAfterWriteBack(dir)
        var data = try #require(fileBytes(dir.file("s")))
        var meta = try #require(fileBytes(dir.file("s.crc")))
        let size = try MetaInfo(parsing: meta).actualSize
        withUnsafeBytes(of: size.littleEndian) { data.replaceSubrange(0..<4, with: $0) }  // header = the real size
        withUnsafeBytes(of: UInt32(7).littleEndian) { meta.replaceSubrange(28..<32, with: $0) }  // meta size wrong
        try writeFile(dir.file("s"), data)
        try writeFile(dir.file("s.crc"), meta)
        let events = EventLog()
        let store = try open(dir, events: events, decision: .fail)
        #expect(try contents(of: store) == full)
        #expect(events.all.isEmpty)
        store.close()
        #expect(try MetaInfo(parsing: try #require(fileBytes(dir.file("s.crc")))).actualSize == size)
    }

    @Test("a damaged meta size with an intact region is recovered losslessly from the CRC")
    func losslessFromCRC() throws {
        let dir = TemporaryDirectory("lossless")
        let (_, full) = try storeWithAppendsAfterWriteBack(dir)
        var meta = try #require(fileBytes(dir.file("s.crc")))
        withUnsafeBytes(of: UInt32(0xFFFF_FF00).littleEndian) { meta.replaceSubrange(28..<32, with: $0) }
        try writeFile(dir.file("s.crc"), meta)
        let events = EventLog()
        let store = try open(dir, events: events)
        #expect(try contents(of: store) == full)
        #expect(events.all.first?.kind == .lengthError)
        #expect(events.all.first?.proposal.basis == .currentCRC)
        #expect(events.all.first?.proposal.isLossless == true)
        store.close()
    }

    @Test(
        "a CRC-valid region that does not decode fails by default; an explicit .recover keeps the records before the bad one"
    )
    func undecodable() throws {
        let dir = TemporaryDirectory("undecodable")
        let store = try MappedKV(id: "s", directory: dir.path)
        for i in 0..<5 { try store.set(Int64(i), forKey: "n\(i)") }
        let good = try contents(of: store)
        store.close()
        // Append a record whose key is longer than MMKV allows, and make the meta vouch for it.
        var data = try #require(fileBytes(dir.file("s")))
        var meta = try MetaInfo(parsing: try #require(fileBytes(dir.file("s.crc"))))
        let start = 4 + Int(meta.actualSize)
        let bad = Varint.encode(70_000) + [0x61, 0x62]
        data.replaceSubrange(start..<(start + bad.count), with: bad)
        meta.actualSize += UInt32(bad.count)
        meta.crcDigest = CRC32.checksum(Array(data[4..<(4 + Int(meta.actualSize))]))
        try writeFile(dir.file("s"), data)
        let metaBytes = meta.serialized + [UInt8](repeating: 0, count: 4096 - MetaInfo.size)
        try writeFile(dir.file("s.crc"), metaBytes)

        let events = EventLog()
        #expect(throws: MappedKVError.self) { _ = try open(dir, events: events) }
        #expect(events.all.first?.kind == .undecodable)
        #expect(fileBytes(dir.file("s")) == data && fileBytes(dir.file("s.crc")) == metaBytes)
        // Writes cannot slip through either: the store does not open for them.
        #expect(throws: MappedKVError.self) { try MappedKV(id: "s", directory: dir.path).set(Int64(9), forKey: "x") }
        #expect(fileBytes(dir.file("s")) == data)

        let recovered = try open(dir, events: events, decision: .recover)
        #expect(try contents(of: recovered) == good)
        #expect(recovered.recoveryReport?.event.proposal.basis == .decodablePrefix)
        recovered.close()
    }

    @Test("a wrong key is reported as such and, by default, changes nothing")
    func wrongKey() throws {
        let dir = TemporaryDirectory("wrongkey")
        _ = try storeWithAppendsAfterWriteBack(dir, key: CryptKey(Array("right".utf8)))
        let before = (fileBytes(dir.file("s")), fileBytes(dir.file("s.crc")))
        let events = EventLog()
        #expect(throws: MappedKVError.self) { _ = try open(dir, key: CryptKey(Array("wrong".utf8)), events: events) }
        #expect(events.all.map(\.kind) == [.wrongKeySuspected])
        #expect(fileBytes(dir.file("s")) == before.0 && fileBytes(dir.file("s.crc")) == before.1)
    }

    @Test(
        "multi-process: damage written behind an open store, as another process's broken append leaves it, is found at the next read and recovered under the lock"
    )
    func damageWrittenBehindAnOpenStore() throws {
        let dir = TemporaryDirectory("mp")
        let (_, confirmed, full) = try statesOfStoreWithAppendsAfterWriteBack(dir)
        let events = EventLog()
        let store = try MappedKV(
            id: "s", directory: dir.path,
            configuration: Configuration(
                isMultiProcess: true,
                recoveryHandler: {
                    events.append($0)
                    return .recover
                }))
        #expect(try contents(of: store) == full)
        // What another writer's append that went wrong leaves, written here to the files (not by
        // another process): bytes past the end and a CRC that covers none of it, and a flipped byte
        // in the last record, before the durability point (a CRC and size alone that vouch for
        // more than the data holds would be writes lost to a crash).
        let meta = try MetaInfo(parsing: try #require(fileBytes(dir.file("s.crc"))))
        let dataHandle = try #require(FileHandle(forUpdatingAtPath: dir.file("s")))
        try dataHandle.seek(toOffset: UInt64(4 + Int(meta.actualSize) - 1))
        let last = try #require(try dataHandle.read(upToCount: 1)).first ?? 0
        try dataHandle.seek(toOffset: UInt64(4 + Int(meta.actualSize) - 1))
        dataHandle.write(Data([last ^ 0x01]))
        try dataHandle.close()
        let handle = try #require(FileHandle(forUpdatingAtPath: dir.file("s.crc")))
        try handle.seek(toOffset: 0)
        handle.write(Data(withUnsafeBytes(of: (meta.crcDigest ^ 0x5A5A).littleEndian) { Array($0) }))
        try handle.seek(toOffset: 28)
        handle.write(Data(withUnsafeBytes(of: (meta.actualSize + 3).littleEndian) { Array($0) }))
        try handle.close()
        #expect(try contents(of: store) == confirmed)
        #expect(events.all.map(\.kind) == [.crcMismatch])
        store.close()
        #expect(try quarantined(dir).count == 2)
    }

    @Test(
        "a damaged store written by MMKV recovers into a file with MMKV's invariants (version 4, sizes, CRCs, last confirmed)"
    )
    func recoveredMMKVStoreKeepsTheFormat() throws {
        let dir = TemporaryDirectory("mmkv")
        try copyGoldenStore("c_overwrites", to: dir)
        let id = "case_c"
        var data = try #require(fileBytes(dir.file(id)))
        data[30] ^= 0x04
        try writeFile(dir.file(id), data)
        let events = EventLog()
        let store = try MappedKV(
            id: id, directory: dir.path,
            configuration: Configuration(
                recoveryHandler: {
                    events.append($0)
                    return .recover
                }))
        #expect(events.all.count == 1)
        try store.set("after recovery", forKey: "new")
        store.close()
        #expect(
            FileStructure.problems(directory: dir.path, id: id).isEmpty,
            "\(FileStructure.problems(directory: dir.path, id: id))")
    }

    @Test("fuzz finding F1: the inspector's verdict on a meta file shorter than the struct agrees with the load")
    func inspectorVerdictOnShortMeta() throws {
        // The minimized input: a 1-byte meta file beside an empty data file.
        let location = try StoreLocation(id: "s", directory: "/nonexistent")
        let report = try StoreInspector.inspect(location: location, dataFile: [], metaFile: [0x5B])
        guard case .damaged(let event) = report.verdict else {
            Issue.record("verdict \(report.verdict) for a 1-byte meta file")
            return
        }
        #expect(event.kind == .metaMissing)
        #expect(!report.isSound)
    }
}
