// Proves `forEachEntry(includingValues:)` lists what `entries()` lists, least recently used first;
// reads no value unless asked (a damaged value file is still listed without values); with values,
// hands over exactly the stored bytes and skips an entry whose bytes fail their check instead of
// handing over others; skips expired entries; and changes nothing: no access is counted and no
// damaged entry is dropped.
import Foundation
import MappedKVCache
import Testing

@Suite struct DiskCacheEnumerationTests {
    /// The keys with their values as a walk reports them.
    func walk(_ cache: DiskCache, includingValues: Bool) throws -> [(String, [UInt8]?)] {
        var seen: [(String, [UInt8]?)] = []
        try cache.forEachEntry(includingValues: includingValues) { seen.append(($0.key, $0.value)) }
        return seen
    }

    /// A cache on a hand-driven clock holding `count` entries set a second apart, every other one
    /// in a file, and one entry that expires after 5 seconds.
    func populated(_ dir: CacheTestDirectory, _ clock: ManualClock) throws -> (DiskCache, [String: [UInt8]]) {
        let cache = try DiskCache(
            directory: dir.path, configuration: DiskCacheConfiguration(inlineThreshold: 64, clock: clock.cacheClock))
        var values: [String: [UInt8]] = [:]
        for index in 0..<6 {
            let value = [UInt8](repeating: UInt8(index), count: index % 2 == 0 ? 200 + index : index)
            try cache.set(value, forKey: "k\(index)")
            values["k\(index)"] = value
            clock.advance(by: 1_000)
        }
        try cache.set([9], forKey: "brief", timeToLive: .seconds(5))
        return (cache, values)
    }

    @Test func theWalkListsEntriesLeastRecentlyUsedFirstWithValuesOnlyWhenAsked() throws {
        let dir = CacheTestDirectory("walk")
        let clock = ManualClock()
        let (cache, values) = try populated(dir, clock)
        _ = try cache.value(forKey: "k1")
        clock.advance(by: 5_000)  // "brief" has expired
        let order = ["k0", "k2", "k3", "k4", "k5", "k1"]
        #expect(try cache.entries().map(\.key) == order)
        let plain = try walk(cache, includingValues: false)
        #expect(plain.map(\.0) == order)
        #expect(plain.allSatisfy { $0.1 == nil })
        var infos: [DiskCacheEntryInfo] = []
        try cache.forEachEntry { infos.append($0) }
        #expect(infos == (try cache.entries()), "the same lines as entries()")
        let withValues = try walk(cache, includingValues: true)
        #expect(withValues.map(\.0) == order)
        for (key, value) in withValues { #expect(value == values[key], "\(key)") }
    }

    @Test func aDamagedValueIsSkippedWithValuesListedWithoutAndNeverDropped() throws {
        let dir = CacheTestDirectory("walk")
        let clock = ManualClock()
        let (cache, values) = try populated(dir, clock)
        let damaged = try #require(values["k2"])
        let name = try #require(DiskFixtures.plainFileName(holding: damaged, in: dir.path))
        var bytes = try #require(DiskFixtures.contents(dir.file("files/" + name)))
        bytes[bytes.count / 2] ^= 0x20
        try DiskFixtures.write(bytes, to: dir.file("files/" + name))

        #expect(try walk(cache, includingValues: false).map(\.0) == ["k0", "k1", "k2", "k3", "k4", "k5", "brief"])
        let withValues = try walk(cache, includingValues: true)
        #expect(withValues.map(\.0) == ["k0", "k1", "k3", "k4", "k5", "brief"])
        #expect(withValues.allSatisfy { $0.1 != nil && $0.1 != damaged })
        #expect(try cache.statistics().count == 7, "the walk dropped nothing")
        #expect(try cache.verify().count == 1, "the damage is still there for verify to report")
    }

    @Test func theWalkCountsNoAccess() throws {
        let dir = CacheTestDirectory("walk")
        let clock = ManualClock()
        let (cache, _) = try populated(dir, clock)
        let before = try cache.entries()
        clock.advance(by: 1_000)
        _ = try walk(cache, includingValues: true)
        cache.close()
        let reopened = try DiskCache(
            directory: dir.path, configuration: DiskCacheConfiguration(inlineThreshold: 64, clock: clock.cacheClock))
        #expect(try reopened.entries() == before)
    }

    @Test func anErrorFromTheBodyEndsTheWalk() throws {
        struct Stop: Error, Equatable {}
        let dir = CacheTestDirectory("walk")
        let (cache, _) = try populated(dir, ManualClock())
        var calls = 0
        #expect(throws: Stop()) {
            try cache.forEachEntry(includingValues: true) { _ in
                calls += 1
                if calls == 2 { throw Stop() }
            }
        }
        #expect(calls == 2)
    }
}
