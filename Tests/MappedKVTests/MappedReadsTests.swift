import Foundation
import Glibc
import MappedKVFormat
import Testing

@testable import MappedKV

/// A single-process store whose index file describes it opens reading through its mappings
/// (docs/FORMAT.md 12.5): no private copy, gets from the mapped buckets and the data mapping; a
/// write, a walk or an exclusive section loads the private state first. Random operations against
/// a plain dictionary, with reopens, catch every way the two states could disagree. An encrypted
/// store does the same, decrypting the pages its reads reach (12.6).
@Suite("Reads through the mappings")
struct MappedReadsTests {
    static func isMapped(_ store: MappedKV) -> Bool {
        store.shared.core.withLock {
            $0.mappedReads.isActive && $0.loaded.mirror.isEmpty && $0.findings.indexOutcome == .mapped
        }
    }

    /// A plain store's configuration, or an encrypted one's.
    static func configuration(encrypted: Bool) -> Configuration {
        Configuration(cryptKey: encrypted ? CryptKey(Array("mapped-reads-key".utf8)) : nil)
    }

    @Test(
        "an open after a close maps the store; a write loads the private state; a walk does too",
        arguments: [false, true])
    func modes(encrypted: Bool) throws {
        let dir = TemporaryDirectory("mapped-modes")
        let configuration = Self.configuration(encrypted: encrypted)
        let store = try MappedKV(id: "s", directory: dir.path, configuration: configuration)
        for i in 0..<1_000 { try store.set("value \(i)", forKey: "k\(i)") }
        try store.removeValue(forKey: "k5")
        store.close()
        let mapped = try MappedKV(id: "s", directory: dir.path, configuration: configuration)
        #expect(Self.isMapped(mapped))
        #expect(try mapped.string(forKey: "k999") == "value 999")
        #expect(try mapped.string(forKey: "k5") == nil)
        #expect(try mapped.contains("k6"))
        #expect(try mapped.count == 999)
        try mapped.sync()
        #expect(Self.isMapped(mapped), "gets, contains, count and sync keep the mapped state")
        #expect(try mapped.allKeys.count == 999)
        #expect(!Self.isMapped(mapped), "a walk loads the private state")
        try mapped.set("new", forKey: "k5")
        #expect(try mapped.string(forKey: "k5") == "new")
        mapped.close()
        let again = try MappedKV(id: "s", directory: dir.path, configuration: configuration)
        #expect(Self.isMapped(again))
        try again.set("first write", forKey: "k0")
        #expect(!Self.isMapped(again))
        #expect(try again.string(forKey: "k0") == "first write")
        #expect(try again.count == 1_000)
    }

    @Test(
        "a file changed by hand after a clean close is checked: damage is found as without the index",
        arguments: [false, true])
    func handDamage(encrypted: Bool) throws {
        let dir = TemporaryDirectory("mapped-damage")
        var configuration = Self.configuration(encrypted: encrypted)
        let store = try MappedKV(id: "s", directory: dir.path, configuration: configuration)
        for i in 0..<200 { try store.set(Int64(i), forKey: "k\(i)") }
        store.close()
        var data = try #require(fileBytes(dir.file("s")))
        data[50] ^= 0x10
        try writeFile(dir.file("s"), data)
        configuration.recoveryHandler = { _ in .fail }
        #expect(throws: MappedKVError.self) {
            _ = try MappedKV(id: "s", directory: dir.path, configuration: configuration)
        }
    }

    @Test(
        "a damaged page of buckets is found at the first lookup that reads it; reads stay right",
        arguments: [false, true])
    func damagedBucketPage(encrypted: Bool) throws {
        let dir = TemporaryDirectory("mapped-bucket-damage")
        let configuration = Self.configuration(encrypted: encrypted)
        let store = try MappedKV(id: "s", directory: dir.path, configuration: configuration)
        for i in 0..<5_000 { try store.set(Int64(i), forKey: "k\(i)") }
        store.close()
        // Every bucket page gets one flipped bit (an empty bucket may become a full one, or the
        // reverse), behind a header that still checks.
        let path = dir.file("s.index")
        var bytes = try #require(fileBytes(path))
        let header = try bytes.withUnsafeBytes { try IndexFileHeader(parsing: $0) }
        for page in 0..<header.bucketPageCount {
            bytes[IndexFileHeader.bucketsOffset + page * IndexFileHeader.bucketPageSize + 13] ^= 0x04
        }
        try writeFile(path, bytes)
        // The open itself looks up the store-kind marker (a probe of one page), so the damage may
        // be found there already.
        let damaged = try MappedKV(id: "s", directory: dir.path, configuration: configuration)
        for i in 0..<5_000 { #expect(try damaged.int64(forKey: "k\(i)") == Int64(i)) }
        #expect(try damaged.int64(forKey: "absent") == nil)
        #expect(!Self.isMapped(damaged), "the first damaged page sent the store to its private state")
        damaged.close()
        let repaired = try MappedKV(id: "s", directory: dir.path, configuration: configuration)
        #expect(Self.isMapped(repaired), "the close wrote a sound file")
        for i in stride(from: 0, to: 5_000, by: 7) { #expect(try repaired.int64(forKey: "k\(i)") == Int64(i)) }
    }

    @Test("batch reads stay in the mapped state and read what single gets read", arguments: [false, true])
    func batchReads(encrypted: Bool) throws {
        let dir = TemporaryDirectory("mapped-batch")
        let configuration = Self.configuration(encrypted: encrypted)
        let store = try MappedKV(id: "s", directory: dir.path, configuration: configuration)
        for i in 0..<3_000 { try store.set(Int64(i * 3), forKey: "k\(i)") }
        for i in stride(from: 0, to: 3_000, by: 11) { try store.removeValue(forKey: "k\(i)") }
        store.close()
        let mapped = try MappedKV(id: "s", directory: dir.path, configuration: configuration)
        let keys = (0..<3_100).map { "k\(($0 * 7) % 3_100)" }
        let values = try mapped.values(forKeys: keys, as: Int64.self)
        #expect(Self.isMapped(mapped), "a batch read keeps the mapped state")
        for (key, value) in zip(keys, values) { #expect(try mapped.int64(forKey: key) == value, "\(key)") }
        let expected = keys.map { key -> Int64? in
            guard let i = Int(key.dropFirst()), i < 3_000, i % 11 != 0 else { return nil }
            return Int64(i * 3)
        }
        #expect(values == expected)
        #expect(Self.isMapped(mapped))
    }

    @Test("random operations and reopens read exactly what a dictionary holds", arguments: [false, true], 1...8)
    func againstModel(encrypted: Bool, seed: UInt64) throws {
        let dir = TemporaryDirectory("mapped-model-\(seed)")
        let configuration = Self.configuration(encrypted: encrypted)
        var random = SplitMix64(seed: seed)
        var model: [String: Int64] = [:]
        var store = try MappedKV(id: "s", directory: dir.path, configuration: configuration)
        for step in 0..<3_000 {
            let key = "k\(random.next() % 300)"
            switch random.next() % 100 {
            case 0..<3:
                store.close()
                store = try MappedKV(id: "s", directory: dir.path, configuration: configuration)
            case 3..<30:
                let value = Int64(bitPattern: random.next())
                try store.set(value, forKey: key)
                model[key] = value
            case 30..<36:
                try store.removeValue(forKey: key)
                model[key] = nil
            case 36:
                try store.trim()
            case 37:
                #expect(try store.count == model.count, "seed \(seed) step \(step)")
            default:
                #expect(try store.int64(forKey: key) == model[key], "seed \(seed) step \(step): \(key)")
                #expect(try store.contains(key) == (model[key] != nil), "seed \(seed) step \(step): \(key)")
            }
        }
        store.close()
        let last = try MappedKV(id: "s", directory: dir.path, configuration: configuration)
        #expect(Self.isMapped(last))
        try IndexFileTests.expectMatches(last, model, "seed \(seed) at the end")
    }
}

/// Power loss and the index file (docs/FORMAT.md 12.5): a file from another boot vouches for
/// nothing, because the page cache that held what it describes is gone.
@Suite("Reads through the mappings after a reboot")
struct MappedReadsRebootTests {
    /// The modification time of `path`, to put back after a change that stands for a power loss
    /// (which leaves no new time behind).
    static func modificationTime(_ path: String) -> timespec {
        var info = stat()
        _ = stat(path, &info)
        return info.st_mtim
    }

    static func setModificationTime(_ path: String, _ time: timespec) {
        var times = [time, time]
        _ = utimensat(AT_FDCWD, path, &times, 0)
    }

    @Test("a file written in another boot makes the open check the region, and a lost page is found")
    func anotherBoot() throws {
        let dir = TemporaryDirectory("mapped-reboot")
        let store = try MappedKV(id: "s", directory: dir.path)
        for i in 0..<300 { try store.set("value \(i)", forKey: "k\(i)") }
        store.close()
        let dataPath = dir.file("s")
        let dataTime = Self.modificationTime(dataPath)
        let metaTime = Self.modificationTime(dir.file("s.crc"))

        // The same files in this boot, their times unchanged: the open maps them without the CRC.
        let unchanged = try MappedKV(id: "s", directory: dir.path)
        #expect(MappedReadsTests.isMapped(unchanged))
        unchanged.close()

        // A page of the region the meta still counts reads as zeros, as after a power failure that
        // lost it, and the index file says it was written in another boot.
        var data = try #require(fileBytes(dataPath))
        for offset in 64..<128 { data[offset] = 0 }
        try writeFile(dataPath, data)
        Self.setModificationTime(dataPath, dataTime)
        Self.setModificationTime(dir.file("s.crc"), metaTime)
        // In the boot that wrote the index file, with the files' times as it recorded them, the
        // open trusts what that boot verified: this is the rule the reboot below must undo.
        let trusted = try MappedKV(
            id: "s", directory: dir.path, configuration: Configuration(recoveryHandler: { _ in .fail }))
        #expect(MappedReadsTests.isMapped(trusted))
        trusted.close()
        let indexPath = dir.file("s.index")
        var index = try #require(fileBytes(indexPath))
        var header = try index.withUnsafeBytes { try IndexFileHeader(parsing: $0) }
        header.bootID = header.bootID.map { $0 ^ 0xFF }
        let serialized = header.serialized()
        index.replaceSubrange(0..<serialized.count, with: serialized)
        try writeFile(indexPath, index)

        #expect(throws: MappedKVError.self) {
            _ = try MappedKV(
                id: "s", directory: dir.path, configuration: Configuration(recoveryHandler: { _ in .fail }))
        }
    }
}
