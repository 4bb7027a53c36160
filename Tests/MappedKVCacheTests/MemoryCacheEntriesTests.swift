// Proves `MemoryCache.entries(order:)` lists the live entries with their values, costs and remaining
// times to live, least or most recently used first, and that listing is not reading: the recency
// order, the counters and the entries stay as they were, and an expired entry is left out without
// being evicted.
//
// Invariant: time moves only through `MemoryCacheTestClock`.

import Testing

@testable import MappedKVCache

@Suite("MemoryCache entries")
struct MemoryCacheEntriesTests {
    let clock = MemoryCacheTestClock()
    let log = MemoryCacheEvictionLog<String, Int>()

    func makeCache(_ limits: MemoryCacheLimits = .unlimited) -> MemoryCache<String, Int> {
        MemoryCache(limits: limits, trimInterval: nil, clock: clock.clock, onEviction: log.handler)
    }

    @Test func entriesAreListedInEitherOrderWithValuesCostsAndTimesToLive() {
        let cache = makeCache()
        cache.set(1, forKey: "a", cost: 10)
        cache.set(2, forKey: "b", cost: 20, timeToLive: .seconds(60))
        cache.set(3, forKey: "c", cost: 30)
        _ = cache.value(forKey: "a")
        clock.advance(by: .seconds(15))
        let expected = [
            MemoryCacheEntry(key: "b", value: 2, cost: 20, timeToLive: .seconds(45)),
            MemoryCacheEntry(key: "c", value: 3, cost: 30),
            MemoryCacheEntry(key: "a", value: 1, cost: 10),
        ]
        #expect(cache.entries() == expected)
        #expect(cache.entries(order: .leastRecentFirst) == expected)
        #expect(cache.entries(order: .mostRecentFirst) == expected.reversed())
        #expect(makeCache().entries().isEmpty)
    }

    @Test func listingChangesNeitherOrderNorCountersNorEntries() {
        let cache = makeCache(.init(count: 3))
        for (value, key) in ["a", "b", "c"].enumerated() { cache.set(value, forKey: key) }
        _ = cache.value(forKey: "a")
        _ = cache.value(forKey: "missing")
        let statistics = cache.statistics
        let order = cache.keysInEvictionOrder
        for listingOrder in MemoryCacheEntryOrder.allCases { _ = cache.entries(order: listingOrder) }
        #expect(cache.statistics == statistics)
        #expect(cache.keysInEvictionOrder == order)
        cache.set(9, forKey: "d")
        #expect(log.all.map(\.key) == ["b"], "the least recently used entry is still the next to go")
        #expect(cache.invariantViolation() == nil)
    }

    @Test func deadEntriesAreLeftOutButNotEvicted() {
        let cache = makeCache(.init(age: .seconds(100)))
        cache.set(1, forKey: "expiring", timeToLive: .seconds(10))
        clock.advance(by: .seconds(50))
        cache.set(2, forKey: "aging")
        cache.set(3, forKey: "fresh")
        clock.advance(by: .seconds(60))  // "expiring" expired; "aging" is not 100 s old yet
        #expect(cache.entries().map(\.key) == ["aging", "fresh"])
        clock.advance(by: .seconds(50))  // both are now past the age limit
        #expect(cache.entries().isEmpty)
        #expect(cache.count == 3, "listing evicts nothing")
        #expect(log.all.isEmpty)
        #expect(cache.statistics == MemoryCacheStatistics())
    }
}
