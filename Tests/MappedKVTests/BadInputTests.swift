import Foundation
import Glibc
import MappedKVFormat
import Testing

@testable import MappedKV

/// Bad keys, values and files give clear errors, never crashes, and never change what was on disk.
@Suite struct BadInputTests {
    @Test func emptyAndOversizedKeysAreRejected() throws {
        let dir = TemporaryDirectory("keys")
        let store = try MappedKV(id: "s", directory: dir.path)
        #expect(throws: MappedKVError.invalidKey("key is empty")) { try store.set(true, forKey: "") }
        #expect(throws: MappedKVError.self) { try store.removeValue(forKey: "") }
        let limit = RecordLimits.maximumKeyLength
        let longest = String(repeating: "k", count: limit)
        try store.set("v", forKey: longest)
        #expect(try store.string(forKey: longest) == "v")
        #expect(throws: MappedKVError.invalidKey("key is \(limit + 1) bytes; the limit is \(limit)")) {
            try store.set("v", forKey: longest + "k")
        }
        // The limit leaves MMKV's reader room for any value: header <= 65535 bytes.
        #expect(
            Record.headerSize(keyLength: limit, valueLength: Int(Int32.max)) <= RecordLimits.mmkvMaximumHeaderLength)
        store.close()
        let reopened = try MappedKV(id: "s", directory: dir.path)
        #expect(try reopened.count == 1)
    }

    @Test func valuesOfTwoGiBOrMoreAreRejectedBeforeAnyWrite() throws {
        let dir = TemporaryDirectory("huge")
        let location = try StoreLocation(id: "s", directory: dir.path)
        let core = try StoreCore(
            location: location, configuration: Configuration(), logger: MappedKV.silentLogger, signal: ChangeSignal())
        // The check must come before the bytes are touched: this buffer is never read.
        let fake = UnsafeRawBufferPointer(start: UnsafeRawPointer(bitPattern: 0x1000), count: 1 << 31)
        #expect(throws: MappedKVError.valueTooLarge(size: 1 << 31)) { try core.setPayload(fake, forKey: "big") }
        #expect(throws: MappedKVError.self) {
            try core.setPayload(UnsafeRawBufferPointer(start: nil, count: 0), forKey: "empty")
        }
        #expect(try core.count() == 0)
    }

    /// Opens `id` expecting failure, and checks both files are byte-identical afterwards.
    /// Opens read-write and read-only with a handler that answers `.fail`; both must throw, the
    /// handler must have been told both times (unless `handlerIsTold` is false: a missing meta
    /// file is refused before any load), and neither file may change.
    func expectFailedOpenLeavesFilesAlone(
        _ dir: TemporaryDirectory, id: String = "s", handlerIsTold: Bool = true,
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        let data = fileBytes(dir.file(id))
        let meta = fileBytes(dir.file(id + ".crc"))
        // The handler is told and answers .fail: the open throws and nothing changes.
        let events = EventLog()
        let failing = Configuration(recoveryHandler: {
            events.append($0)
            return .fail
        })
        var readOnlyFailing = failing
        readOnlyFailing.isReadOnly = true
        #expect(throws: MappedKVError.self, sourceLocation: sourceLocation) {
            _ = try MappedKV(id: id, directory: dir.path, configuration: failing)
        }
        #expect(throws: MappedKVError.self, sourceLocation: sourceLocation) {
            _ = try MappedKV(id: id, directory: dir.path, configuration: readOnlyFailing)
        }
        #expect(
            events.all.count == (handlerIsTold ? 2 : 0), "the handler was not told of the damage",
            sourceLocation: sourceLocation)
        #expect(fileBytes(dir.file(id)) == data, "data file changed", sourceLocation: sourceLocation)
        #expect(fileBytes(dir.file(id + ".crc")) == meta, "meta file changed", sourceLocation: sourceLocation)
    }

    func makeStore(_ dir: TemporaryDirectory, keys: Int = 20) throws {
        let store = try MappedKV(id: "s", directory: dir.path)
        for i in 0..<keys { try store.set("value-\(i)", forKey: "key-\(i)") }
        store.close()
    }

    @Test func crcMismatchFailsTheOpen() throws {
        let dir = TemporaryDirectory("crc")
        try makeStore(dir)
        var data = try #require(fileBytes(dir.file("s")))
        data[4 + 20] ^= 0x01
        try writeFile(dir.file("s"), data)
        expectFailedOpenLeavesFilesAlone(dir)
        let error = #expect(throws: MappedKVError.self) {
            _ = try MappedKV(
                id: "s", directory: dir.path, configuration: Configuration(recoveryHandler: { _ in .fail }))
        }
        guard case .corrupted(_, .crcMismatch)? = error else {
            Issue.record("expected a CRC mismatch, got \(String(describing: error))")
            return
        }
    }

    @Test func truncatedDataFileFailsTheOpen() throws {
        let dir = TemporaryDirectory("truncated")
        try makeStore(dir)
        let data = try #require(fileBytes(dir.file("s")))
        try writeFile(dir.file("s"), Array(data.prefix(50)))
        expectFailedOpenLeavesFilesAlone(dir)
    }

    @Test func shortOrAbsurdMetaFailsTheOpen() throws {
        let dir = TemporaryDirectory("meta")
        try makeStore(dir)
        let meta = try #require(fileBytes(dir.file("s.crc")))
        try writeFile(dir.file("s.crc"), Array(meta.prefix(10)))
        expectFailedOpenLeavesFilesAlone(dir)
        var absurd = meta
        absurd.replaceSubrange(28..<32, with: [0xFF, 0xFF, 0xFF, 0x7F])  // actualSize far past the file
        try writeFile(dir.file("s.crc"), absurd)
        expectFailedOpenLeavesFilesAlone(dir)
    }

    @Test func crcValidButUndecodableFailsTheOpen() throws {
        // A region that passes its CRC but holds a key over MMKV's limit: MMKV would load it as
        // empty and destroy it on the next write. We refuse to open it.
        let dir = TemporaryDirectory("undecodable")
        var region: [UInt8] = [0x80, 0x80, 0x80, 0x01]
        region += Varint.encode(65_532) + [UInt8](repeating: 0x61, count: 65_532) + [1, 1]
        var data = [UInt8](repeating: 0, count: 4 + region.count)
        data.replaceSubrange(4..<(4 + region.count), with: region)
        data += [UInt8](repeating: 0, count: roundUpToPage(data.count) - data.count)
        var meta = MetaInfo()
        _ = meta.update(actualSize: UInt32(region.count), crc: CRC32.checksum(region), increasesSequence: true)
        try writeFile(dir.file("s"), data)
        try writeFile(dir.file("s.crc"), meta.serialized + [UInt8](repeating: 0, count: 4096 - 112))
        expectFailedOpenLeavesFilesAlone(dir)
    }

    @Test func missingMetaBesideDataIsNotRecreated() throws {
        let dir = TemporaryDirectory("nometa")
        try makeStore(dir)
        try FileManager.default.removeItem(atPath: dir.file("s.crc"))
        expectFailedOpenLeavesFilesAlone(dir, handlerIsTold: false)
        #expect(!FileManager.default.fileExists(atPath: dir.file("s.crc")))
    }

    @Test func emptiedOrZeroedMetaBesideDataIsRefused() throws {
        let dir = TemporaryDirectory("blankmeta")
        try makeStore(dir)
        try writeFile(dir.file("s.crc"), [])
        expectFailedOpenLeavesFilesAlone(dir)
        try writeFile(dir.file("s.crc"), [UInt8](repeating: 0, count: 4096))
        expectFailedOpenLeavesFilesAlone(dir)
        let report = try StoreInspector.inspect(
            location: try StoreLocation(id: "s", directory: dir.path),
            dataFile: fileBytes(dir.file("s")), metaFile: fileBytes(dir.file("s.crc")))
        #expect(!report.isSound)
    }

    @Test func allZeroDataWithoutMetaIsAFreshStore() throws {
        // What a crash between creating the two files of a new store leaves behind.
        let dir = TemporaryDirectory("zerodata")
        try writeFile(dir.file("s"), [UInt8](repeating: 0, count: 4096))
        let store = try MappedKV(id: "s", directory: dir.path)
        try store.set("v", forKey: "k")
        #expect(try store.string(forKey: "k") == "v")
    }

    @Test func randomGarbageFilesNeverCrashOrChange() throws {
        var rng = SplitMix64(seed: 42)
        let dir = TemporaryDirectory("garbage")
        try makeStore(dir, keys: 30)
        let goodData = try #require(fileBytes(dir.file("s")))
        let goodMeta = try #require(fileBytes(dir.file("s.crc")))
        var opened = 0
        var refused = 0
        for round in 0..<300 {
            var data = goodData
            var meta = goodMeta
            switch round % 6 {
            case 0:
                for _ in 0..<Int.random(in: 1...8, using: &rng) {
                    data[Int.random(in: 0..<data.count, using: &rng)] ^= UInt8.random(in: 1...255, using: &rng)
                }
            case 1: data = Array(data.prefix(Int.random(in: 0..<data.count, using: &rng)))
            case 2:
                meta = (0..<Int.random(in: 0...200, using: &rng)).map { _ in UInt8.random(in: 0...255, using: &rng) }
            case 3: for i in 0..<112 where Bool.random(using: &rng) { meta[i] = UInt8.random(in: 0...255, using: &rng) }
            case 4:
                data += (0..<Int.random(in: 1...5000, using: &rng)).map { _ in UInt8.random(in: 0...255, using: &rng) }
            default:
                data = (0..<Int.random(in: 0...9000, using: &rng)).map { _ in UInt8.random(in: 0...255, using: &rng) }
            }
            try writeFile(dir.file("s"), data)
            try writeFile(dir.file("s.crc"), meta)
            do {
                let store = try MappedKV(id: "s", directory: dir.path, configuration: Configuration(isReadOnly: true))
                _ = try store.entries()
                opened += 1
            } catch {
                refused += 1
            }
            #expect(fileBytes(dir.file("s")) == data)
            #expect(fileBytes(dir.file("s.crc")) == meta)
            do {
                let store = try MappedKV(id: "s", directory: dir.path)
                try store.set("after", forKey: "probe")
                #expect(try store.string(forKey: "probe") == "after")
            } catch {
                #expect(fileBytes(dir.file("s")) == data, "a failed read-write open changed the data file")
                #expect(fileBytes(dir.file("s.crc")) == meta, "a failed read-write open changed the meta file")
            }
            // The inspector must also survive anything.
            _ = try StoreInspector.inspect(
                location: try StoreLocation(id: "s", directory: dir.path), dataFile: data, metaFile: meta)
        }
        #expect(opened + refused == 300)
        #expect(refused > 0 && opened > 0, "the damage mix should both break and spare stores")
    }
}

func roundUpToPage(_ size: Int) -> Int { (size + 4095) / 4096 * 4096 }
