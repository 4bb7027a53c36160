import Foundation
import MappedKVCache
import Testing

/// The disk cache's basic contract: values round-trip inline and in files, replace, remove,
/// expire, survive a reopen, and a damaged value is a miss that drops the entry.
@Suite struct DiskCacheBasicTests {
    func open(
        _ dir: CacheTestDirectory, _ configuration: DiskCacheConfiguration = DiskCacheConfiguration()
    ) throws
        -> DiskCache
    {
        try DiskCache(directory: dir.path, configuration: configuration)
    }

    @Test func inlineAndFileValuesRoundTripAndSurviveAReopen() throws {
        let dir = CacheTestDirectory()
        let cache = try open(dir, DiskCacheConfiguration(inlineThreshold: 100))
        let small = Array("small".utf8)
        let large = (0..<5000).map { UInt8($0 % 251) }
        try cache.set(small, forKey: "s")
        try cache.set(large, forKey: "l", extendedData: [1, 2, 3])
        #expect(try cache.value(forKey: "s") == small)
        #expect(try cache.value(forKey: "l") == large)
        #expect(try cache.entry(forKey: "l")?.extendedData == [1, 2, 3])
        let stats = try cache.statistics()
        #expect(stats.count == 2 && stats.inlineCount == 1 && stats.fileCount == 1 && stats.orphanCount == 0)
        #expect(stats.bytes == small.count + large.count)
        cache.close()
        let reopened = try open(dir, DiskCacheConfiguration(inlineThreshold: 100))
        #expect(try reopened.value(forKey: "l") == large)
        #expect(try reopened.value(forKey: "missing") == nil)
    }

    @Test func replacingAFileValueDeletesTheOldFile() throws {
        let dir = CacheTestDirectory()
        let cache = try open(dir, DiskCacheConfiguration(inlineThreshold: 10))
        try cache.set([UInt8](repeating: 1, count: 100), forKey: "k")
        try cache.set([UInt8](repeating: 2, count: 200), forKey: "k")
        #expect(try cache.value(forKey: "k") == [UInt8](repeating: 2, count: 200))
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.file("files")).count == 1)
        try cache.set([3], forKey: "k")
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.file("files")).isEmpty)
        try cache.removeValue(forKey: "k")
        #expect(try cache.value(forKey: "k") == nil)
    }

    @Test func aDamagedFileIsAMissAndDropsTheEntry() throws {
        let dir = CacheTestDirectory()
        let cache = try open(dir, DiskCacheConfiguration(inlineThreshold: 10))
        try cache.set([UInt8](repeating: 9, count: 100), forKey: "k")
        let name = try #require(try FileManager.default.contentsOfDirectory(atPath: dir.file("files")).first)
        let path = dir.file("files/" + name)
        var bytes = try #require(FileManager.default.contents(atPath: path))
        bytes[bytes.count - 1] ^= 0x01
        try bytes.write(to: URL(fileURLWithPath: path))
        #expect(try cache.value(forKey: "k") == nil)
        #expect(try cache.contains("k") == false)
        #expect(try cache.verify().isEmpty)
    }

    @Test func entriesExpireAndTrimRemovesThem() throws {
        let dir = CacheTestDirectory()
        let clock = ManualClock()
        let cache = try open(dir, DiskCacheConfiguration(clock: clock.cacheClock))
        try cache.set([1], forKey: "short", timeToLive: .seconds(10))
        try cache.set([2], forKey: "forever")
        clock.advance(by: 10_001)
        #expect(try cache.value(forKey: "short") == nil)
        #expect(try cache.value(forKey: "forever") == [2])
        #expect(try cache.statistics().count == 1)
    }

    @Test func trimRemovesLeastRecentlyUsedFirst() throws {
        let dir = CacheTestDirectory()
        let clock = ManualClock()
        let cache = try open(dir, DiskCacheConfiguration(clock: clock.cacheClock))
        for index in 0..<10 {
            try cache.set([UInt8(index)], forKey: "k\(index)")
            clock.advance(by: 1_000)
        }
        _ = try cache.value(forKey: "k0")  // now the most recently used
        clock.advance(by: 2_000)
        let report = try cache.trim(toCount: 3)
        #expect(report.removedEntries == 7)
        #expect(try cache.entries().map(\.key) == ["k8", "k9", "k0"])
    }

    @Test func removeAllEmptiesTheCacheAndTrimCollectsTheTrash() throws {
        let dir = CacheTestDirectory()
        let cache = try open(dir, DiskCacheConfiguration(inlineThreshold: 10))
        for index in 0..<20 { try cache.set([UInt8](repeating: UInt8(index), count: 50), forKey: "k\(index)") }
        try cache.removeAll()
        #expect(try cache.statistics().count == 0)
        #expect(try cache.value(forKey: "k1") == nil)
        try cache.trim()
        #expect(try cache.statistics().orphanCount == 0)
    }
}
