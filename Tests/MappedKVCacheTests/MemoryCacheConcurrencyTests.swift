// `MemoryCache` under concurrent use, and the lifetime of its automatic trimming task.
//
// Invariant: waits poll a condition against a deadline; no sleep stands in for synchronization.

import Synchronization
import Testing

@testable import MappedKVCache

@Suite("MemoryCache concurrency")
struct MemoryCacheConcurrencyTests {
    @Test("many tasks hammering one cache keep it consistent", .timeLimit(.minutes(2)))
    func manyTasksHammerOneCache() async {
        let clock = MemoryCacheTestClock()
        let counters = MemoryCacheHammerCounters()
        let cache = MemoryCache<Int, [Int]>(
            limits: .init(count: 200, totalCost: 1_500, age: .seconds(30)), trimInterval: nil, clock: clock.clock,
            onEviction: { key, value, _ in
                if value.first != key { counters.wrongValues.add(1, ordering: .relaxed) }
                counters.evictions.add(1, ordering: .relaxed)
            })
        let tasks = 8
        let operations = 20_000
        let lookups = await withTaskGroup(of: Int.self) { group in
            for task in 0..<tasks {
                group.addTask {
                    var random = MemoryCacheTestRandom(seed: UInt64(task))
                    var lookups = 0
                    for _ in 0..<operations {
                        let key = Int.random(in: 0..<400, using: &random)
                        switch Int.random(in: 0..<100, using: &random) {
                        case 0..<45:
                            lookups += 1
                            if let value = cache.value(forKey: key), value.first != key {
                                counters.wrongValues.add(1, ordering: .relaxed)
                            }
                        case 45..<85:
                            let ttl: Duration? = key.isMultiple(of: 3) ? .seconds(5) : nil
                            cache.set([key, task], forKey: key, cost: key % 16, timeToLive: ttl)
                        case 85..<92: cache.removeValue(forKey: key)
                        case 92..<95: _ = cache.contains(key)
                        case 95..<97: clock.advance(by: .seconds(1))
                        case 97: cache.trimExpiredAndAged()
                        case 98: cache.trim(toCount: 150)
                        default: if key == 0 { cache.handleMemoryPressure() } else { _ = cache.statistics }
                        }
                    }
                    return lookups
                }
            }
            return await group.reduce(0, +)
        }
        let statistics = cache.statistics
        #expect(counters.wrongValues.load(ordering: .relaxed) == 0, "every value read or evicted belongs to its key")
        #expect(statistics.lookups == lookups)
        #expect(statistics.evictions == counters.evictions.load(ordering: .relaxed))
        #expect(statistics.hits > 0 && statistics.evictions > 0)
        #expect(cache.count <= 200 && cache.totalCost <= 1_500)
        #expect(cache.invariantViolation() == nil)
    }

    @Test("the trimming task sweeps expired entries by itself", .timeLimit(.minutes(1)))
    func trimmingTaskSweeps() async {
        let clock = MemoryCacheTestClock()
        let log = MemoryCacheEvictionLog<String, Int>()
        let cache = MemoryCache<String, Int>(
            limits: .init(age: .seconds(60)), trimInterval: .milliseconds(1), clock: clock.clock,
            onEviction: log.handler)
        cache.set(1, forKey: "short", timeToLive: .seconds(1))
        cache.set(2, forKey: "idle")
        cache.set(3, forKey: "kept")
        clock.advance(by: .seconds(2))
        #expect(await memoryCacheEventually { cache.count == 2 })
        #expect(log.all == [.init(key: "short", value: 1, reason: .expired)])
        _ = cache.value(forKey: "kept")
        clock.advance(by: .seconds(59))
        #expect(await memoryCacheEventually { cache.count == 1 })
        #expect(cache.keysInEvictionOrder == ["kept"])
        #expect(log.reasons == [.expired, .age])
    }

    @Test("the trimming task ends when the cache is released", .timeLimit(.minutes(1)))
    func trimmingTaskEndsWithTheCache() async throws {
        let (reference, task) = Self.makeAbandonedCache()
        let trimTask = try #require(task)
        #expect(await memoryCacheEventually { reference.cache == nil })
        let finished = Atomic<Bool>(false)
        Task {
            await trimTask.value
            finished.store(true, ordering: .releasing)
        }
        #expect(await memoryCacheEventually { finished.load(ordering: .acquiring) })
        #expect(trimTask.isCancelled)
    }

    @Test func noTrimIntervalMeansNoTask() {
        let cache = MemoryCache<Int, Int>(trimInterval: nil)
        #expect(cache.automaticTrimTask == nil)
        #expect(cache.trimInterval == nil)
    }

    /// Makes a cache whose task ticks every millisecond, drops every strong reference to it and returns
    /// a weak reference and its task.
    static func makeAbandonedCache() -> (WeakMemoryCacheReference, Task<Void, Never>?) {
        let cache = MemoryCache<Int, Int>(trimInterval: .milliseconds(1))
        cache.set(1, forKey: 1, timeToLive: .seconds(100))
        return (WeakMemoryCacheReference(cache), cache.automaticTrimTask)
    }
}

/// What the hammering tasks count.
final class MemoryCacheHammerCounters: Sendable {
    /// Evictions the handler heard.
    let evictions = Atomic<Int>(0)
    /// Values read or evicted under a key they were not stored for.
    let wrongValues = Atomic<Int>(0)
}

/// A weak reference to a cache, readable from any task.
final class WeakMemoryCacheReference: Sendable {
    private let reference: Mutex<WeakBox>

    private struct WeakBox {
        weak var cache: MemoryCache<Int, Int>?
    }

    init(_ cache: MemoryCache<Int, Int>) {
        reference = Mutex(WeakBox(cache: cache))
    }

    var cache: MemoryCache<Int, Int>? { reference.withLock { $0.cache } }
}
