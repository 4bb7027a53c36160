// Unit tests of `MemoryCache`'s rules: expiry, limits, eviction reports, counters and re-entrancy.
//
// Invariant: time moves only through `MemoryCacheTestClock`, so no test depends on real time.

import Synchronization
import Testing

@testable import MappedKVCache

@Suite("MemoryCache")
struct MemoryCacheTests {
    typealias Cache = MemoryCache<String, Int>

    let clock = MemoryCacheTestClock()
    let log = MemoryCacheEvictionLog<String, Int>()

    func makeCache(_ limits: MemoryCacheLimits = .unlimited, fraction: Double = 0.5) -> Cache {
        Cache(
            limits: limits, trimInterval: nil, memoryPressureFraction: fraction, clock: clock.clock,
            onEviction: log.handler)
    }

    // MARK: - Basics

    @Test func storesReadsReplacesAndRemoves() {
        let cache = makeCache()
        #expect(cache.isEmpty)
        cache.set(1, forKey: "a", cost: 3)
        cache.set(2, forKey: "b", cost: 4)
        #expect(cache.value(forKey: "a") == 1)
        cache.set(10, forKey: "a", cost: 1)
        #expect(cache.value(forKey: "a") == 10)
        #expect(cache.count == 2)
        #expect(cache.totalCost == 5)
        #expect(cache.removeValue(forKey: "a") == 10)
        #expect(cache.removeValue(forKey: "a") == nil)
        #expect(cache.value(forKey: "a") == nil)
        #expect(cache.count == 1)
        #expect(cache.totalCost == 4)
        #expect(log.all.isEmpty, "replacing and removing are not evictions")
    }

    @Test func readsMarkEntriesWithoutMovingThemAndStoresQueueThemLast() {
        let cache = makeCache()
        for key in ["a", "b", "c", "d"] { cache.set(0, forKey: key) }
        #expect(cache.keysInEvictionOrder == ["a", "b", "c", "d"])
        _ = cache.value(forKey: "b")
        _ = cache.value(forKey: "a")
        cache.set(1, forKey: "c")
        #expect(cache.keysInEvictionOrder == ["a", "b", "d", "c"], "reads do not move; a store queues last")
        #expect(cache.entries().map(\.key) == ["d", "b", "a", "c"], "the listing is by last store or read")
        _ = cache.contains("d")
        #expect(cache.entries().map(\.key) == ["d", "b", "a", "c"], "contains is not a read")
        cache.trim(toCount: 3)
        #expect(log.all.map(\.key) == ["d"], "contains earned d no second chance")
    }

    @Test func evictionGivesReadEntriesASecondChanceInQueueOrder() {
        let cache = makeCache()
        for (value, key) in ["a", "b", "c"].enumerated() { cache.set(value, forKey: key) }
        _ = cache.value(forKey: "b")
        _ = cache.value(forKey: "a")
        cache.trim(toCount: 2)
        // a and b were read: both go back in the queue, unmarked, in queue order; c goes.
        #expect(log.all.map(\.key) == ["c"])
        #expect(cache.keysInEvictionOrder == ["a", "b"])
        cache.trim(toCount: 1)
        // Exact LRU would evict b, read before a; the queue evicts a, queued again first.
        #expect(log.all.map(\.key) == ["c", "a"])
        #expect(cache.keysInEvictionOrder == ["b"])
        #expect(cache.invariantViolation() == nil)
    }

    @Test func countLimitEvictsTheOldestUnreadEntry() {
        let cache = makeCache(.init(count: 3))
        for (value, key) in ["a", "b", "c"].enumerated() { cache.set(value, forKey: key) }
        _ = cache.value(forKey: "a")
        cache.set(3, forKey: "d")
        // a, read, goes back in the queue behind d; b, the oldest unread, goes.
        #expect(cache.keysInEvictionOrder == ["c", "d", "a"])
        #expect(cache.entries().map(\.key) == ["c", "a", "d"])
        #expect(log.all == [.init(key: "b", value: 1, reason: .count)])
    }

    @Test func removeAllKeepsStatisticsAndReportsNothing() {
        let cache = makeCache()
        cache.set(1, forKey: "a")
        _ = cache.value(forKey: "a")
        cache.removeAll()
        #expect(cache.isEmpty && cache.totalCost == 0)
        #expect(cache.statistics == MemoryCacheStatistics(hits: 1))
        #expect(log.all.isEmpty)
        cache.set(2, forKey: "a")
        #expect(cache.value(forKey: "a") == 2)
    }

    // MARK: - Time to live and age

    @Test func timeToLiveExpiresEntriesWhetherReadOrNot() {
        let cache = makeCache()
        cache.set(1, forKey: "a", timeToLive: .seconds(10))
        cache.set(2, forKey: "b")
        clock.advance(by: .seconds(9))
        #expect(cache.value(forKey: "a") == 1, "reading does not extend a time to live")
        clock.advance(by: .milliseconds(999))
        #expect(cache.contains("a"))
        clock.advance(by: .milliseconds(1))
        #expect(!cache.contains("a"))
        #expect(cache.count == 2, "contains leaves expired entries in place")
        #expect(cache.value(forKey: "a") == nil)
        #expect(cache.count == 1)
        #expect(cache.value(forKey: "b") == 2)
        #expect(log.all == [.init(key: "a", value: 1, reason: .expired)])
    }

    @Test func storingAgainSetsANewTimeToLive() {
        let cache = makeCache()
        cache.set(1, forKey: "a", timeToLive: .seconds(1))
        cache.set(2, forKey: "a")
        clock.advance(by: .seconds(100))
        #expect(cache.value(forKey: "a") == 2)
        cache.set(3, forKey: "a", timeToLive: .seconds(5))
        clock.advance(by: .seconds(5))
        #expect(cache.removeValue(forKey: "a") == nil, "an expired entry is removed but not returned")
        #expect(cache.isEmpty)
    }

    @Test func nonPositiveTimeToLiveIsEvictedAtOnce() {
        let cache = makeCache()
        cache.set(1, forKey: "a")
        cache.set(2, forKey: "a", timeToLive: .zero)
        #expect(cache.isEmpty)
        #expect(log.all == [.init(key: "a", value: 2, reason: .expired)])
    }

    @Test func removeExpiredValuesSweepsEveryExpiredEntry() {
        let cache = makeCache()
        cache.set(1, forKey: "a", timeToLive: .seconds(1))
        cache.set(2, forKey: "b", timeToLive: .seconds(3))
        cache.set(3, forKey: "c", timeToLive: .seconds(2))
        cache.set(4, forKey: "d")
        clock.advance(by: .seconds(2))
        cache.removeExpiredValues()
        #expect(cache.keysInEvictionOrder == ["b", "d"])
        #expect(log.all.map(\.key) == ["a", "c"])
        #expect(Set(log.reasons) == [.expired])
    }

    @Test func ageLimitCountsFromTheLastRead() {
        let cache = makeCache(.init(age: .seconds(10)))
        cache.set(1, forKey: "a")
        cache.set(2, forKey: "b")
        clock.advance(by: .seconds(6))
        #expect(cache.value(forKey: "a") == 1)
        clock.advance(by: .seconds(4))
        #expect(cache.value(forKey: "b") == nil, "unread for exactly the age limit")
        #expect(cache.value(forKey: "a") == 1)
        #expect(log.all == [.init(key: "b", value: 2, reason: .age)])
    }

    @Test func storingTrimsEntriesPastTheAgeLimit() {
        let cache = makeCache(.init(age: .seconds(10)))
        cache.set(1, forKey: "a")
        clock.advance(by: .seconds(5))
        cache.set(2, forKey: "b")
        clock.advance(by: .seconds(5))
        cache.set(3, forKey: "c")
        #expect(cache.keysInEvictionOrder == ["b", "c"])
        clock.advance(by: .seconds(20))
        cache.trimExpiredAndAged()
        #expect(cache.isEmpty)
        #expect(log.reasons == [.age, .age, .age])
    }

    @Test func anEntryGivenASecondChanceCanAgeOutBehindYoungerOnesUntilASweep() {
        let cache = makeCache(.init(age: .seconds(10)))
        cache.set(1, forKey: "a")
        clock.advance(by: .seconds(1))
        #expect(cache.value(forKey: "a") == 1)
        clock.advance(by: .seconds(1))
        cache.set(2, forKey: "b")  // the store's age walk gives a, read, its second chance
        #expect(cache.keysInEvictionOrder == ["b", "a"])
        clock.advance(by: .seconds(9))  // a unread for 10 s, b for 9 s
        cache.set(3, forKey: "c")  // the age walk stops at b
        #expect(cache.keysInEvictionOrder == ["b", "a", "c"])
        #expect(cache.count == 3, "a is past the age limit but not evicted yet")
        #expect(!cache.contains("a"))
        #expect(cache.entries().map(\.key) == ["b", "c"])
        cache.trimExpiredAndAged()
        #expect(cache.keysInEvictionOrder == ["b", "c"])
        #expect(log.all == [.init(key: "a", value: 1, reason: .age)])
    }

    @Test func trimToAgeUsesTheGivenAge() {
        let cache = makeCache()
        cache.set(1, forKey: "a")
        clock.advance(by: .seconds(3))
        cache.set(2, forKey: "b")
        clock.advance(by: .seconds(1))
        cache.trim(toAge: .seconds(2))
        #expect(cache.keysInEvictionOrder == ["b"])
        cache.trim(toAge: .zero)
        #expect(cache.isEmpty)
        #expect(log.reasons == [.age, .age])
    }

    @Test func aClockGoingBackwardsIsHeldAtItsLatestReading() {
        let cache = makeCache(.init(age: .seconds(10)))
        clock.advance(by: .seconds(100))
        cache.set(1, forKey: "a")
        clock.advance(by: .seconds(-50))
        cache.set(2, forKey: "b")
        #expect(cache.keysInEvictionOrder == ["a", "b"])
        #expect(cache.invariantViolation() == nil)
        clock.advance(by: .seconds(59))
        #expect(cache.value(forKey: "a") == 1, "nine seconds after the latest reading")
    }

    // MARK: - Cost

    @Test func costLimitWithMixedCosts() {
        let cache = makeCache(.init(totalCost: 10))
        cache.set(1, forKey: "a", cost: 3)
        cache.set(2, forKey: "b", cost: 4)
        cache.set(3, forKey: "c", cost: 2)
        #expect(cache.totalCost == 9)
        cache.set(4, forKey: "d", cost: 5)
        #expect(cache.keysInEvictionOrder == ["c", "d"])
        #expect(cache.totalCost == 7)
        #expect(log.all == [.init(key: "a", value: 1, reason: .cost), .init(key: "b", value: 2, reason: .cost)])
        cache.set(5, forKey: "e", cost: 0)
        cache.set(30, forKey: "c", cost: 8)
        #expect(cache.keysInEvictionOrder == ["e", "c"], "growing an entry's cost evicts others")
        #expect(cache.totalCost == 8)
        _ = cache.value(forKey: "e")
        cache.trim(toCost: 0)
        #expect(cache.keysInEvictionOrder == ["e"], "trimming stops once the cost is low enough")
        #expect(log.reasons == [.cost, .cost, .cost, .cost])
    }

    @Test func aValueCostlierThanTheLimitEvictsNothingElse() {
        let cache = makeCache(.init(totalCost: 10))
        cache.set(1, forKey: "a", cost: 6)
        cache.set(2, forKey: "b", cost: 4)
        cache.set(3, forKey: "b", cost: 11)
        #expect(cache.keysInEvictionOrder == ["a"], "the old value for the key is gone, the rest stay")
        #expect(log.all == [.init(key: "b", value: 3, reason: .cost)])
    }

    @Test func zeroCountLimitKeepsNothing() {
        let cache = makeCache(.init(count: 0))
        cache.set(1, forKey: "a")
        #expect(cache.isEmpty)
        #expect(log.all == [.init(key: "a", value: 1, reason: .count)])
    }

    @Test func changingLimitsTrimsAtOnce() {
        let cache = makeCache()
        for (value, key) in ["a", "b", "c", "d"].enumerated() { cache.set(value, forKey: key, cost: 2) }
        cache.limits = MemoryCacheLimits(count: 3, totalCost: 4)
        #expect(cache.keysInEvictionOrder == ["c", "d"])
        #expect(log.reasons == [.count, .cost])
        #expect(cache.limits == MemoryCacheLimits(count: 3, totalCost: 4))
        cache.trim(toCount: 1)
        #expect(cache.keysInEvictionOrder == ["d"])
    }

    // MARK: - Memory pressure

    @Test func memoryPressureKeepsTheFractionOfCountAndCost() {
        let cache = makeCache(fraction: 0.5)
        for index in 0..<10 { cache.set(index, forKey: "k\(index)", cost: index < 8 ? 1 : 10) }
        // 10 entries costing 28: keep at most 5 entries and a cost of 14.
        cache.handleMemoryPressure()
        #expect(cache.keysInEvictionOrder == ["k9"])
        #expect(Set(log.reasons) == [.memoryPressure])
        #expect(log.all.count == 9)
    }

    @Test func memoryPressureEvictsExpiredEntriesFirstAndGivesStorageBack() {
        let cache = makeCache(fraction: 0.25)
        for index in 0..<1_000 {
            cache.set(index, forKey: "k\(index)", timeToLive: index.isMultiple(of: 2) ? .seconds(1) : nil)
        }
        clock.advance(by: .seconds(1))
        let capacity = cache.slotCapacity
        cache.handleMemoryPressure()
        #expect(cache.count == 250)
        #expect(log.reasons.prefix(500).allSatisfy { $0 == .expired })
        #expect(log.reasons.dropFirst(500).allSatisfy { $0 == .memoryPressure })
        #expect(cache.slotCapacity < capacity / 2)
        #expect(cache.keysInEvictionOrder == (250..<500).map { "k\($0 * 2 + 1)" })
        #expect(cache.invariantViolation() == nil)
        cache.memoryPressureFraction = 0
        cache.handleMemoryPressure()
        #expect(cache.isEmpty)
    }

    // MARK: - Statistics

    @Test func countersCountHitsMissesAndEvictions() {
        let cache = makeCache(.init(count: 2))
        cache.set(1, forKey: "a", timeToLive: .seconds(1))
        cache.set(2, forKey: "b")
        _ = cache.value(forKey: "a")
        _ = cache.value(forKey: "b")
        _ = cache.value(forKey: "zzz")
        clock.advance(by: .seconds(1))
        _ = cache.value(forKey: "a")
        cache.set(3, forKey: "c")
        cache.set(4, forKey: "d")
        _ = cache.contains("b")
        let statistics = cache.statistics
        #expect(statistics == MemoryCacheStatistics(hits: 2, misses: 2, evictions: 2))
        #expect(statistics.lookups == 4)
        #expect(statistics.hitRate == 0.5)
        cache.resetStatistics()
        #expect(cache.statistics == MemoryCacheStatistics())
        #expect(cache.statistics.hitRate == 0)
    }

    // MARK: - Handlers and re-entrancy

    @Test("the eviction handler may call back into the cache", .timeLimit(.minutes(1)))
    func handlerMayUseTheCache() {
        let cache = Cache(limits: .init(count: 2), trimInterval: nil, clock: clock.clock)
        let heard = Mutex<[String]>([])
        cache.onEviction = { [weak cache] key, value, reason in
            guard let cache else { return }
            heard.withLock { $0.append("\(key):\(reason):\(cache.count):\(cache.contains(key))") }
            if key == "a" {
                // Storing from the handler evicts again; the nested handler runs before this one ends.
                cache.set(value * 100, forKey: "spill")
                _ = cache.value(forKey: "c")
                cache.limits = cache.limits
                _ = cache.statistics
            }
        }
        cache.set(1, forKey: "a")
        cache.set(2, forKey: "b")
        cache.set(3, forKey: "c")
        #expect(heard.withLock { $0 } == ["a:count:2:false", "b:count:2:false"])
        #expect(cache.keysInEvictionOrder == ["c", "spill"])
        #expect(cache.entries().map(\.key) == ["spill", "c"], "c was read after spill was stored")
        #expect(cache.value(forKey: "spill") == 100)
    }

    @Test("values are destroyed outside the lock", .timeLimit(.minutes(1)))
    func valueDeinitializersMayUseTheCache() {
        let destroyed = Mutex(0)
        let cache = MemoryCache<Int, MemoryCacheTestObject>(
            limits: .init(count: 2), trimInterval: nil, clock: clock.clock)
        let reenter: @Sendable () -> Void = { [weak cache] in
            _ = cache?.count
            _ = cache?.contains(0)
            destroyed.withLock { $0 += 1 }
        }
        cache.set(MemoryCacheTestObject(reenter), forKey: 1)
        cache.set(MemoryCacheTestObject(reenter), forKey: 1)  // replaced
        cache.set(MemoryCacheTestObject(reenter), forKey: 2)
        cache.set(MemoryCacheTestObject(reenter), forKey: 3)  // evicts 1
        cache.removeValue(forKey: 2)
        cache.set(MemoryCacheTestObject(reenter), forKey: 4, timeToLive: .seconds(1))
        clock.advance(by: .seconds(1))
        _ = cache.value(forKey: 4)  // expired
        cache.removeAll()
        #expect(destroyed.withLock { $0 } == 5)
    }
}

/// An object that runs a closure when it is destroyed.
final class MemoryCacheTestObject: Sendable {
    let onDeinit: @Sendable () -> Void

    init(_ onDeinit: @escaping @Sendable () -> Void) {
        self.onDeinit = onDeinit
    }

    deinit {
        onDeinit()
    }
}
