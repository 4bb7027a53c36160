import CoreMetrics
import Foundation
import MappedKV
import MetricsTestKit
import Synchronization
import Testing

@testable import MappedKVCache

/// What a cache reports through swift-metrics when its disk configuration asks for it, and that
/// it creates nothing when it does not. Each test injects its own `TestMetrics` factory; none
/// touches the global `MetricsSystem`.
@Suite struct CacheMetricsTests {
    /// A memory clock the test moves by hand.
    final class ManualMemoryClock: Sendable {
        private let time = Mutex(Duration.seconds(1))
        func advance(by duration: Duration) { time.withLock { $0 += duration } }
        var clock: MemoryCacheClock { MemoryCacheClock { [self] in time.withLock { $0 } } }
    }

    func configuration(_ factory: TestMetrics?, clock: ManualClock) -> DiskCacheConfiguration {
        DiskCacheConfiguration(
            trimInterval: nil, clock: clock.cacheClock,
            metrics: factory.map { MetricsOptions(labelPrefix: "c", dimensions: [("app", "tests")], factory: $0) })
    }

    func total(_ factory: TestMetrics, _ label: String, _ dimensions: [(String, String)] = []) -> Int64 {
        factory.counterTotal(label: label, dimensions: dimensions + [("app", "tests")])
    }

    @Test("hits and misses are counted by tier, for single and batch gets")
    func hitsAndMisses() throws {
        let dir = CacheTestDirectory("metrics-hits")
        let factory = TestMetrics()
        let cache = try Cache<[UInt8]>(
            directory: dir.path, diskConfiguration: configuration(factory, clock: ManualClock()),
            serializer: BytesCacheSerializer())
        defer { cache.close() }
        try cache.set([1, 2, 3], forKey: "a")
        #expect(try cache.value(forKey: "a") == [1, 2, 3])  // memory hit
        #expect(try cache.value(forKey: "b") == nil)  // memory miss, disk miss
        cache.memory.removeValue(forKey: "a")
        #expect(try cache.value(forKey: "a") == [1, 2, 3])  // memory miss, disk hit
        #expect(try cache.disk.value(forKey: "a") == [1, 2, 3])  // disk hit
        #expect(try cache.values(forKeys: ["a", "b", "c"]).count == 1)  // memory 1 hit 2 misses; disk 2 misses

        #expect(total(factory, "c.cache.hits", [("tier", "memory")]) == 2)
        #expect(total(factory, "c.cache.misses", [("tier", "memory")]) == 4)
        #expect(total(factory, "c.cache.hits", [("tier", "disk")]) == 2)
        #expect(total(factory, "c.cache.misses", [("tier", "disk")]) == 3)
    }

    @Test("the memory tier's evictions are counted by reason")
    func memoryEvictions() throws {
        let dir = CacheTestDirectory("metrics-memory-evictions")
        let factory = TestMetrics()
        let memoryClock = ManualMemoryClock()
        let cache = try Cache<[UInt8]>(
            directory: dir.path, memoryLimits: MemoryCacheLimits(count: 2, totalCost: 100),
            diskConfiguration: configuration(factory, clock: ManualClock()), serializer: BytesCacheSerializer(),
            memoryClock: memoryClock.clock)
        defer { cache.close() }
        for key in ["a", "b", "c"] { try cache.set([1], forKey: key) }  // the third evicts one: count
        try cache.set([1], forKey: "big", cost: 60)
        try cache.set([2], forKey: "bigger", cost: 60)  // over the cost limit: at least one goes, for cost
        try cache.set([3], forKey: "brief", timeToLive: .seconds(1))
        memoryClock.advance(by: .seconds(2))
        _ = cache.memory.value(forKey: "brief")  // found expired: evicted

        #expect(total(factory, "c.cache.evictions", [("tier", "memory"), ("reason", "count")]) >= 1)
        #expect(total(factory, "c.cache.evictions", [("tier", "memory"), ("reason", "cost")]) >= 1)
        #expect(total(factory, "c.cache.evictions", [("tier", "memory"), ("reason", "expired")]) == 1)
        #expect(total(factory, "c.cache.evictions", [("tier", "memory"), ("reason", "memoryPressure")]) == 0)
    }

    @Test("disk trims are counted with what they evicted, by reason, and the totals are recorded")
    func diskTrims() throws {
        let dir = CacheTestDirectory("metrics-trims")
        let factory = TestMetrics()
        let clock = ManualClock()
        let disk = try DiskCache(directory: dir.path, configuration: configuration(factory, clock: clock))
        defer { disk.close() }
        try disk.set([UInt8](repeating: 1, count: 10), forKey: "brief", timeToLive: .seconds(1))
        for i in 0..<6 { try disk.set([UInt8](repeating: 2, count: 10), forKey: "k\(i)") }
        let bytes = try factory.expectMeter("c.cache.bytes", [("app", "tests")])
        let entries = try factory.expectMeter("c.cache.entries", [("app", "tests")])
        #expect(bytes.lastValue == 70)
        #expect(entries.lastValue == 7)

        clock.advance(by: 2_000)
        try disk.trim()  // the expired entry
        try disk.trim(toCount: 5)  // one more
        try disk.trim(toBytes: 40)  // one more
        clock.advance(by: 60_000)
        try disk.set([3], forKey: "late")
        try disk.flushAccessTimes()
        try disk.trim(toAge: .seconds(30))  // every entry but "late" was last used before that

        #expect(total(factory, "c.cache.trims") == 4)
        #expect(total(factory, "c.cache.evictions", [("tier", "disk"), ("reason", "expired")]) == 1)
        #expect(total(factory, "c.cache.evictions", [("tier", "disk"), ("reason", "count")]) == 1)
        #expect(total(factory, "c.cache.evictions", [("tier", "disk"), ("reason", "bytes")]) == 1)
        #expect(total(factory, "c.cache.evictions", [("tier", "disk"), ("reason", "age")]) == 4)
        let statistics = try disk.statistics()
        #expect(statistics.count == 1)
        #expect(bytes.lastValue == Double(statistics.bytes))
        #expect(entries.lastValue == 1)
        try disk.removeAll()
        #expect(bytes.lastValue == 0)
    }

    @Test("without options a cache makes no metric, even with a factory in reach")
    func nothingWithoutOptions() throws {
        let dir = CacheTestDirectory("metrics-off")
        let factory = TestMetrics()
        try withMetricsFactory(factory) { () throws -> Void in
            let cache = try Cache<[UInt8]>(
                directory: dir.path, memoryLimits: MemoryCacheLimits(count: 1),
                diskConfiguration: configuration(nil, clock: ManualClock()), serializer: BytesCacheSerializer())
            #expect(cache.metrics == nil && cache.disk.metrics == nil)
            try cache.set([1], forKey: "a")
            try cache.set([2], forKey: "b")  // evicts "a" from memory
            _ = try cache.value(forKey: "a")
            _ = try cache.value(forKey: "b")
            try cache.disk.trim(toCount: 0)
            cache.close()
        }
        #expect(factory.counters.isEmpty && factory.meters.isEmpty && factory.recorders.isEmpty)
        // With options and no factory of their own, the factory in reach is used: the check above
        // could have seen metrics.
        try withMetricsFactory(factory) { () throws -> Void in
            var configuration = configuration(nil, clock: ManualClock())
            configuration.metrics = MetricsOptions(labelPrefix: "on")
            let disk = try DiskCache(directory: dir.path, configuration: configuration)
            _ = try disk.value(forKey: "a")
            disk.close()
        }
        #expect(factory.counterTotal(label: "on.cache.misses", dimensions: [("tier", "disk")]) == 1)
    }
}
