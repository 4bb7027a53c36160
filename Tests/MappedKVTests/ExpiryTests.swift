import Foundation
import MappedKVFormat
import Synchronization
import Testing

@testable import MappedKV

/// A clock the test moves by hand.
final class ManualClock: Sendable {
    private let seconds: Mutex<UInt32>
    init(_ start: UInt32) { seconds = Mutex(start) }
    var now: UInt32 { seconds.withLock { $0 } }
    func advance(_ delta: UInt32) { seconds.withLock { $0 += delta } }
    var expiryClock: ExpiryClock { ExpiryClock { self.now } }
}

/// MMKV-compatible key expiry (docs/FORMAT.md section 5) with an injected clock.
@Suite struct ExpiryTests {
    func meta(_ dir: TemporaryDirectory) throws -> MetaInfo {
        try MetaInfo(parsing: try #require(fileBytes(dir.file("s.crc"))))
    }

    func open(
        _ dir: TemporaryDirectory, _ clock: ManualClock, key: CryptKey? = nil, readOnly: Bool = false
    ) throws -> MappedKV {
        try MappedKV(
            id: "s", directory: dir.path,
            configuration: Configuration(isReadOnly: readOnly, cryptKey: key, clock: clock.expiryClock))
    }

    @Test func enablingOnANewStoreChangesOnlyTheMeta() throws {
        let dir = TemporaryDirectory("exp-new")
        let clock = ManualClock(1_000_000)
        let store = try open(dir, clock)
        let before = try meta(dir)
        try store.enableKeyExpiry()
        let after = try meta(dir)
        #expect(after.flags.contains(.keyExpiry) && after.version == .flag)
        #expect(after.sequence == before.sequence + 1 && after.actualSize == 0)
        #expect(store.isKeyExpiryEnabled)
        store.close()
        #expect(try open(dir, clock).isKeyExpiryEnabled, "the flag is read back from the meta")
    }

    @Test func expiredKeysVanishFromEveryView() throws {
        let dir = TemporaryDirectory("exp-views")
        let clock = ManualClock(1_700_000_000)
        let store = try open(dir, clock)
        try store.enableKeyExpiry()
        try store.set("short-lived", forKey: "a", expiresAfter: .seconds(10))
        try store.set(Int32(7), forKey: "b", expiresAfter: .seconds(100))
        try store.set("forever", forKey: "c")
        #expect(try store.string(forKey: "a") == "short-lived")
        #expect(try store.payload(forKey: "b") == [7], "values read back without their suffix")
        clock.advance(10)
        #expect(try store.string(forKey: "a") == nil, "expired at exactly its time")
        #expect(try store.payload(forKey: "a") == nil)
        #expect(try store.contains("a") == false)
        #expect(try store.count == 2)
        #expect(try store.allKeys == ["b", "c"])
        #expect(try store.entries().map(\.key) == ["b", "c"])
        #expect(try store.valueSize(forKey: "c") == 7)
        store.close()
        let readOnly = try open(dir, clock, readOnly: true)
        #expect(try readOnly.allKeys == ["b", "c"], "read-only opens honour the flag too")
        readOnly.close()
        clock.advance(1_000)
        let reopened = try open(dir, clock)
        #expect(try reopened.allKeys == ["c"])
        // Overwrite one key until a compaction (write-back) happens.
        let sequence = try meta(dir).sequence
        while try meta(dir).sequence == sequence {
            try reopened.set(String(repeating: "f", count: 100), forKey: "filler")
        }
        // The write-back dropped the expired records.
        let data = try #require(fileBytes(dir.file("s")))
        #expect(!String(decoding: data, as: UTF8.self).contains("short-lived"))
        #expect(FileStructure.problems(directory: dir.path, id: "s").isEmpty)
    }

    @Test func theSuffixIsMMKVs() throws {
        let dir = TemporaryDirectory("exp-format")
        let clock = ManualClock(0x6B00_E600)
        let store = try open(dir, clock)
        try store.enableKeyExpiry()
        try store.set("str", forKey: "s", expiresAfter: .seconds(0x50))
        store.close()
        let data = try #require(fileBytes(dir.file("s")))
        let size = Int(try meta(dir).actualSize)
        // docs/FORMAT.md section 5's verified example: key "s" = "str" expiring at 0x6b00e650.
        #expect(
            Array(data[(4 + size - 11)..<(4 + size)]) == [
                0x01, 0x73, 0x08, 0x03, 0x73, 0x74, 0x72, 0x50, 0xE6, 0x00, 0x6B,
            ])
    }

    @Test func defaultDurationAndNever() throws {
        let dir = TemporaryDirectory("exp-default")
        let clock = ManualClock(5_000)
        let store = try open(dir, clock)
        try store.enableKeyExpiry(defaultDuration: .seconds(60))
        try store.set(true, forKey: "default")
        try store.set(true, forKey: "never", expiresAfter: .zero)
        try store.set(true, forKey: "partial", expiresAfter: .milliseconds(1_500))
        clock.advance(2)
        #expect(try store.bool(forKey: "partial") == nil, "1.5 s rounds up to 2 s")
        clock.advance(58)
        #expect(try store.allKeys == ["never"])
        clock.advance(UInt32.max - clock.now)
        #expect(try store.bool(forKey: "never") == true)
    }

    @Test func expiryTimesClampAt2106() {
        #expect(ExpirySuffix.expiration(now: .max - 5, duration: 100) == .max)
        #expect(ExpirySuffix.expiration(now: 10, duration: 0) == ExpirySuffix.never)
        #expect(MappedKV.expirySeconds(.seconds(Int64.max)) == .max)
        #expect(MappedKV.expirySeconds(.seconds(-5)) == 0)
    }

    @Test func togglingOnAStoreWithDataRewritesEveryValue() throws {
        let dir = TemporaryDirectory("exp-toggle")
        let clock = ManualClock(2_000_000_000)
        let store = try open(dir, clock)
        for i in 0..<50 { try store.set("value-\(i)", forKey: "k\(i)") }
        let model = try contents(of: store)
        var sequence = try meta(dir).sequence
        try store.enableKeyExpiry(defaultDuration: .seconds(30))
        #expect(try meta(dir).sequence == sequence + 1)
        #expect(try contents(of: store) == model, "values read back without the suffix")
        try store.set("fresh", forKey: "new", expiresAfter: .seconds(1_000))
        clock.advance(31)
        #expect(try store.allKeys == ["new"], "the rewrite gave old values the default lifetime")
        for i in 0..<5 { try store.set("again-\(i)", forKey: "k\(i)") }
        sequence = try meta(dir).sequence
        try store.disableKeyExpiry()
        let off = try meta(dir)
        #expect(off.sequence == sequence + 1 && !off.flags.contains(.keyExpiry) && off.version == .flag)
        #expect(!store.isKeyExpiryEnabled)
        clock.advance(10_000)
        #expect(try store.count == 6, "without expiry nothing expires")
        #expect(try store.string(forKey: "new") == "fresh")
        #expect(throws: MappedKVError.self) { try store.set("x", forKey: "y", expiresAfter: .seconds(5)) }
        store.close()
        let reopened = try open(dir, clock)
        #expect(try reopened.string(forKey: "k3") == "again-3")
        #expect(FileStructure.problems(directory: dir.path, id: "s").isEmpty)
    }

    @Test func encryptedStoresExpireToo() throws {
        let dir = TemporaryDirectory("exp-enc")
        let clock = ManualClock(100)
        let key = try #require(CryptKey(Array("expiry-key".utf8)))
        let store = try open(dir, clock, key: key)
        try store.set("x", forKey: "before")
        try store.enableKeyExpiry(defaultDuration: .seconds(5))
        try store.set("y", forKey: "after", expiresAfter: .seconds(50))
        clock.advance(5)
        #expect(try store.allKeys == ["after"])
        store.close()
        #expect(try open(dir, clock, key: key).string(forKey: "after") == "y")
        #expect(FileStructure.problems(directory: dir.path, id: "s", key: key).isEmpty)
    }
}
