// Proves the batched calls keep the single-key calls' rules: `values(forKeys:)` returns exactly
// the hits (inline and file values, no expired entry, no repeat), counts each hit as an access,
// and drops a damaged entry instead of returning its bytes; `removeValues(forKeys:)` removes the
// entries and their files and leaves the rest; `removeValues(largerThan:)` removes exactly the
// values above the size; and an invalid argument throws before anything is read or changed.
import Foundation
import MappedKV
import MappedKVCache
import Testing

@Suite struct DiskCacheBatchTests {
    static let small = Array("small".utf8)
    static let large = (0..<500).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ 3) }

    /// A cache with a 64-byte inline threshold on a hand-driven clock.
    func open(_ dir: CacheTestDirectory, _ clock: ManualClock) throws -> DiskCache {
        try DiskCache(
            directory: dir.path, configuration: DiskCacheConfiguration(inlineThreshold: 64, clock: clock.cacheClock))
    }

    @Test func valuesForKeysReturnsTheHitsOnly() throws {
        let dir = CacheTestDirectory("batch")
        let clock = ManualClock()
        let cache = try open(dir, clock)
        try cache.set(Self.small, forKey: "inline")
        try cache.set(Self.large, forKey: "file")
        try cache.set([], forKey: "empty")
        try cache.set([7], forKey: "brief", timeToLive: .seconds(10))
        let keys = ["inline", "file", "missing", "empty", "brief", "inline"]
        #expect(
            try cache.values(forKeys: keys)
                == ["inline": Self.small, "file": Self.large, "empty": [], "brief": [7]])
        clock.advance(by: 10_000)
        #expect(try cache.values(forKeys: keys) == ["inline": Self.small, "file": Self.large, "empty": []])
        #expect(try cache.values(forKeys: []) == [:])
        #expect(try cache.values(forKeys: ["missing"]) == [:])
    }

    @Test func eachHitOfABatchIsAnAccessAndAMissIsNot() throws {
        let dir = CacheTestDirectory("batch")
        let clock = ManualClock()
        let cache = try open(dir, clock)
        for index in 0..<5 {
            try cache.set(index == 2 ? Self.large : [UInt8(index)], forKey: "k\(index)")
            clock.advance(by: 1_000)
        }
        _ = try cache.values(forKeys: ["k2", "absent", "k0"])
        #expect(try cache.entries().map(\.key) == ["k1", "k3", "k4", "k0", "k2"])
        cache.close()
        let reopened = try open(dir, clock)
        #expect(try reopened.entries().map(\.key) == ["k1", "k3", "k4", "k0", "k2"], "the accesses were written")
    }

    @Test func aDamagedEntryInABatchIsAMissAndIsDropped() throws {
        let dir = CacheTestDirectory("batch")
        let clock = ManualClock()
        let cache = try open(dir, clock)
        let survivor = [UInt8](repeating: 0xAB, count: 300)
        try cache.set(Self.large, forKey: "damaged-file")
        try cache.set(Self.small, forKey: "damaged-inline")
        try cache.set(survivor, forKey: "survivor")
        cache.close()
        // A flipped byte in the value file, and a flipped inline value byte in the manifest record.
        let name = try #require(DiskFixtures.plainFileName(holding: Self.large, in: dir.path))
        var file = try #require(DiskFixtures.contents(dir.file("files/" + name)))
        file[file.count - 1] ^= 0x01
        try DiskFixtures.write(file, to: dir.file("files/" + name))
        let manifest = try MappedKV(
            id: "manifest", directory: dir.path,
            configuration: Configuration(isMultiProcess: true, processLock: .sharedMemory))
        var record = try #require(try manifest.value(forKey: "e:damaged-inline", as: [UInt8].self))
        record[record.count - 1] ^= 0x80
        try manifest.set(record, forKey: "e:damaged-inline")
        manifest.close()

        let reopened = try open(dir, clock)
        let keys = ["damaged-file", "damaged-inline", "survivor"]
        #expect(try reopened.values(forKeys: keys) == ["survivor": survivor])
        #expect(try reopened.entries().map(\.key) == ["survivor"], "both damaged entries were dropped")
        #expect(!FileManager.default.fileExists(atPath: dir.file("files/" + name)))
        #expect(try reopened.verify() == [])
    }

    /// An empty key, and a key longer than the manifest allows.
    @Test(arguments: [0, 20_000])
    func anInvalidKeyThrowsBeforeAnythingIsReadOrChanged(length: Int) throws {
        let invalid = String(repeating: "k", count: length)
        let dir = CacheTestDirectory("batch")
        let clock = ManualClock()
        let cache = try open(dir, clock)
        try cache.set(Self.large, forKey: "a")
        try cache.set(Self.small, forKey: "b")
        clock.advance(by: 1_000)
        let before = try cache.entries()
        #expect(throws: CacheError.self) { try cache.values(forKeys: ["a", invalid]) }
        #expect(throws: CacheError.self) { try cache.removeValues(forKeys: ["a", "b", invalid]) }
        #expect(try cache.entries() == before, "no access counted, nothing removed")
        #expect(try cache.values(forKeys: ["a", "b"]) == ["a": Self.large, "b": Self.small])
    }

    @Test func removeValuesForKeysRemovesTheEntriesAndTheirFilesOnly() throws {
        let dir = CacheTestDirectory("batch")
        let cache = try open(dir, ManualClock())
        for index in 0..<6 {
            try cache.set(index % 2 == 0 ? Self.large + [UInt8(index)] : [UInt8(index)], forKey: "k\(index)")
        }
        #expect(DiskFixtures.names(in: dir.file("files")).count == 3)
        try cache.removeValues(forKeys: ["k0", "k1", "absent", "k0", "k4"])
        #expect(try cache.entries().map(\.key).sorted() == ["k2", "k3", "k5"])
        #expect(DiskFixtures.names(in: dir.file("files")).count == 1, "the removed entries' files are deleted")
        #expect(try cache.value(forKey: "k2") == Self.large + [2])
        try cache.removeValues(forKeys: [])
        try cache.removeValues(forKeys: ["absent"])
        #expect(try cache.statistics().count == 3)
        #expect(try cache.verify() == [])
    }

    @Test func removeValuesLargerThanASizeRemovesExactlyThose() throws {
        let dir = CacheTestDirectory("batch")
        let clock = ManualClock()
        let cache = try open(dir, clock)
        let sizes = ["empty": 0, "ten": 10, "hundred": 100, "hundred-one": 101, "big": 5_000]
        for (key, size) in sizes { try cache.set([UInt8](repeating: 1, count: size), forKey: key) }
        try cache.set([UInt8](repeating: 2, count: 2_000), forKey: "expired-big", timeToLive: .seconds(1))
        clock.advance(by: 2_000)
        #expect(throws: CacheError.invalidArgument(reason: "a size of -1 bytes is negative")) {
            try cache.removeValues(largerThan: -1)
        }
        #expect(try cache.statistics().count == 6)

        let report = try cache.removeValues(largerThan: 100)
        #expect(report.removedEntries == 3 && report.removedBytes == 101 + 5_000 + 2_000, "\(report)")
        #expect(report.damagedEntries == 0 && report.orphansRemoved == 0 && report.ran)
        #expect(try cache.entries().map(\.key).sorted() == ["empty", "hundred", "ten"])
        #expect(DiskFixtures.names(in: dir.file("files")).count == 1, "only the 100-byte value's file is left")
        #expect(try cache.removeValues(largerThan: 100).removedEntries == 0)
        let rest = try cache.removeValues(largerThan: 0)
        #expect(rest.removedEntries == 2 && rest.removedBytes == 110, "\(rest)")
        #expect(try cache.values(forKeys: Array(sizes.keys)) == ["empty": []])
        #expect(DiskFixtures.names(in: dir.file("files")).isEmpty)
        #expect(try cache.verify() == [])
    }
}
