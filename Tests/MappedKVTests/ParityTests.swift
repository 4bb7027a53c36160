import Foundation
import MappedKVFormat
import Testing

@testable import MappedKV

/// MMKV parity functions on an open store: batch removal, import, releasing memory, clearing
/// with space kept, compare-before-set, numeric vectors, keys including expired ones, expiry at
/// open, the current key and the version.
@Suite struct ParityTests {
    func open(
        _ dir: TemporaryDirectory, id: String = "s", _ configuration: Configuration = Configuration()
    ) throws -> MappedKV {
        try MappedKV(id: id, directory: dir.path, configuration: configuration)
    }

    func meta(_ dir: TemporaryDirectory, id: String = "s") throws -> MetaInfo {
        try MetaInfo(parsing: try #require(fileBytes(dir.file(id + ".crc"))))
    }

    @Test func removeValuesIsOneAppend() throws {
        let dir = TemporaryDirectory("parity-remove")
        let store = try open(dir)
        for key in ["a", "b", "c", "d"] { try store.set(key, forKey: key) }
        let before = try store.info()
        #expect(try store.removeValues(forKeys: ["a", "c", "missing", "a"]) == 2)
        let after = try store.info()
        #expect(try store.allKeys == ["b", "d"])
        #expect(after.recordCount == before.recordCount + 2, "two deletion records")
        #expect(after.meta.sequence == before.meta.sequence, "an append, not a write-back")
        #expect(try store.removeValues(forKeys: ["x"]) == 0)
        #expect(try store.removeValues(forKeys: ["b", "d"]) == 2)
        #expect(try store.count == 0)
        store.close()
        #expect(try open(dir).count == 0)
    }

    @Test func removeValuesThatDoNotFitCompact() throws {
        let dir = TemporaryDirectory("parity-remove-full")
        let store = try open(dir)
        let keys = (0..<300).map { String(repeating: "k", count: 20) + "\($0)" }
        for key in keys { try store.set(Int32(1), forKey: key) }
        // Fill the file so the deletion records cannot fit.
        while try store.actualSize + 4 + 600 < store.totalSize { try store.set(Int32(2), forKey: keys[0]) }
        #expect(try store.removeValues(forKeys: Array(keys[0..<250])) == 250)
        #expect(try store.count == 50)
        store.close()
        #expect(try Set(open(dir).allKeys) == Set(keys[250...]))
    }

    @Test func importKeepsExpiryTimes() throws {
        let dir = TemporaryDirectory("parity-import")
        let clock = ManualClock(1_000_000)
        let source = try open(dir, id: "src", Configuration(clock: clock.expiryClock))
        try source.enableKeyExpiry()
        try source.set("short", forKey: "a", expiresAfter: .seconds(10))
        try source.set("forever", forKey: "b")
        try source.set(Int32(5), forKey: "n", expiresAfter: .seconds(100))
        let target = try open(dir, id: "dst", Configuration(clock: clock.expiryClock))
        try target.enableKeyExpiry()
        try target.set("old", forKey: "a")
        #expect(try target.importEntries(from: source) == 3)
        #expect(try target.string(forKey: "a") == "short")
        #expect(try target.int32(forKey: "n") == 5)
        clock.advance(11)
        #expect(try target.allKeys == ["b", "n"], "a's expiry time came along")
        clock.advance(100)
        #expect(try target.allKeys == ["b"])
        #expect(try target.importEntries(from: target) == 0)
        // Into a store without expiry: the values come without their times.
        let plain = try open(dir, id: "plain", Configuration(clock: clock.expiryClock))
        #expect(try plain.importEntries(from: source) == 1)
        #expect(try plain.payload(forKey: "b") == "forever".payloadBytes)
    }

    @Test func releaseMemoryReloadsOnNextUse() throws {
        let dir = TemporaryDirectory("parity-memory")
        let store = try open(dir)
        for i in 0..<100 { try store.set(Int64(i), forKey: "k\(i)") }
        try store.releaseMemory()
        #expect(store.shared.core.withLock { $0.loaded.mirror.isEmpty && $0.loaded.index.count == 0 })
        #expect(try store.int64(forKey: "k42") == 42)
        #expect(try store.count == 100)
        try store.releaseMemory()
        try store.set(Int64(-1), forKey: "k0")
        #expect(try store.int64(forKey: "k0") == -1 && store.count == 100)
    }

    @Test func clearAllKeepingSpace() throws {
        let dir = TemporaryDirectory("parity-clear")
        let store = try open(dir)
        for i in 0..<500 { try store.set(String(repeating: "x", count: 50), forKey: "k\(i)") }
        let size = try store.totalSize
        #expect(size > 4096)
        try store.clearAll(keepingSpace: true)
        #expect(try store.count == 0 && store.totalSize == size)
        #expect(fileBytes(dir.file("s"))?.allSatisfy { $0 == 0 } == true, "the old records are erased")
        try store.set("v", forKey: "k")
        try store.clearAll(keepingSpace: false)
        #expect(try store.totalSize == 4096)
    }

    @Test func compareBeforeSetSkipsEqualWrites() throws {
        let dir = TemporaryDirectory("parity-compare")
        let store = try open(dir, Configuration(comparesBeforeSet: true))
        try store.set("v", forKey: "k")
        let size = try store.actualSize
        try store.set("v", forKey: "k")
        #expect(try store.actualSize == size, "an equal value is not written again")
        try store.set("w", forKey: "k")
        #expect(try store.actualSize > size)
        // With expiry on, a set also renews the time, so it is always written.
        try store.enableKeyExpiry()
        let withExpiry = try store.actualSize
        try store.set("w", forKey: "k")
        #expect(try store.actualSize > withExpiry)
    }

    @Test func numericVectorsUseTheContainerEncoding() throws {
        #expect(
            [Int32(1), -1, 300].payloadBytes == [0x0d, 0x01] + Array(repeating: 0xff, count: 9) + [0x01, 0xac, 0x02])
        #expect([UInt32]().payloadBytes == [0x00])
        #expect([Float(1.5)].payloadBytes == [0x04, 0x00, 0x00, 0xc0, 0x3f])
        #expect([Double(2.25), 1].payloadBytes.count == 17)
        let dir = TemporaryDirectory("parity-vector")
        let store = try open(dir)
        try store.set([Int64.min, 0, Int64.max], forKey: "i64")
        try store.set([UInt64.max, 1], forKey: "u64")
        try store.set([Float(1.5), -0.25], forKey: "f")
        try store.set([Double.pi, -1e300], forKey: "d")
        try store.set([Int32](), forKey: "empty")
        try store.set([true, false, true], forKey: "b")
        store.close()
        let reopened = try open(dir)
        #expect(try reopened.value(forKey: "i64", as: [Int64].self) == [Int64.min, 0, Int64.max])
        #expect(try reopened.value(forKey: "u64", as: [UInt64].self) == [UInt64.max, 1])
        #expect(try reopened.value(forKey: "f", as: [Float].self) == [1.5, -0.25])
        #expect(try reopened.value(forKey: "d", as: [Double].self) == [Double.pi, -1e300])
        #expect(try reopened.value(forKey: "empty", as: [Int32].self) == [])
        #expect(try reopened.value(forKey: "b", as: [Bool].self) == [true, false, true])
        #expect([true, false].payloadBytes == [0x02, 0x01, 0x00])
        // A double vector cut inside an element does not decode.
        #expect(throws: FormatError.self) { try [Double](payload: [0x08, 0, 0, 0]) }
    }

    @Test func keysIncludingExpired() throws {
        let dir = TemporaryDirectory("parity-expired")
        let clock = ManualClock(1_000_000)
        let store = try open(dir, Configuration(clock: clock.expiryClock))
        try store.enableKeyExpiry()
        try store.set("a", forKey: "a", expiresAfter: .seconds(5))
        try store.set("b", forKey: "b")
        clock.advance(6)
        #expect(try store.allKeys == ["b"] && store.count == 1)
        #expect(try store.allKeys(includingExpired: true) == ["a", "b"])
        #expect(try store.count(includingExpired: true) == 2)
        #expect(try store.count(includingExpired: false) == 1)
    }

    @Test func keyExpiryAtOpen() throws {
        let dir = TemporaryDirectory("parity-expiry-open")
        let clock = ManualClock(1_000_000)
        let configuration = Configuration(clock: clock.expiryClock, keyExpiry: .seconds(60))
        let store = try open(dir, configuration)
        #expect(store.isKeyExpiryEnabled)
        #expect(try meta(dir).flags.contains(.keyExpiry))
        try store.set("v", forKey: "k")
        clock.advance(61)
        #expect(try store.contains("k") == false, "the configured default lifetime applies")
        store.close()
        let reader = try open(dir, Configuration(isReadOnly: true, clock: clock.expiryClock, keyExpiry: .seconds(5)))
        #expect(reader.isKeyExpiryEnabled)
    }

    @Test func cryptKeyFollowsRekey() throws {
        let dir = TemporaryDirectory("parity-key")
        let first = CryptKey(Array("one".utf8))!
        let second = CryptKey(Array("two".utf8), aes256: true)!
        let store = try open(dir, Configuration(cryptKey: first))
        #expect(store.cryptKey == first)
        try store.rekey(to: second)
        #expect(store.cryptKey == second)
        try store.rekey(to: nil)
        #expect(store.cryptKey == nil)
    }

    @Test func versionIsSemantic() {
        let parts = MappedKV.version.split(separator: ".")
        #expect(parts.count == 3 && parts.allSatisfy { Int($0) != nil })
    }
}
