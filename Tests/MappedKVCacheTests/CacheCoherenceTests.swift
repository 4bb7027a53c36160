import Dispatch
import Foundation
import MappedKVCache
import Synchronization
import Testing

/// The memory tier of `Cache` stays true to the disk side within one process: lifetimes follow a
/// value from disk into memory, a default time to live applies, writes by another cache on the
/// same directory (or straight to the disk side) drop the stale memory copy, and observers hear
/// what happened. Other processes' writes are in MappedKVMultiProcessTests/CacheCoherenceProcessTests.
@Suite struct CacheCoherenceTests {
    /// A memory clock the test moves by hand.
    final class ManualMemoryClock: Sendable {
        private let time = Mutex(Duration.seconds(1))
        func advance(by duration: Duration) { time.withLock { $0 += duration } }
        var clock: MemoryCacheClock { MemoryCacheClock { [self] in time.withLock { $0 } } }
    }

    func bytesCache(
        _ dir: CacheTestDirectory, disk: ManualClock, memory: ManualMemoryClock,
        defaultTimeToLive: Duration? = nil
    ) throws -> Cache<[UInt8]> {
        try Cache(
            directory: dir.path,
            diskConfiguration: DiskCacheConfiguration(
                trimInterval: nil, defaultTimeToLive: defaultTimeToLive, clock: disk.cacheClock),
            serializer: BytesCacheSerializer(), memoryClock: memory.clock)
    }

    @Test func aDiskHitEntersMemoryWithTheEntrysRemainingLifetime() throws {
        let dir = CacheTestDirectory("coherence-ttl")
        let diskClock = ManualClock()
        let memoryClock = ManualMemoryClock()
        let writer = try bytesCache(dir, disk: diskClock, memory: memoryClock)
        try writer.set([1], forKey: "k", timeToLive: .seconds(1))
        let reader = try bytesCache(dir, disk: diskClock, memory: memoryClock)
        diskClock.advance(by: 400)
        #expect(try reader.value(forKey: "k") == [1])  // a disk hit: 600 ms left
        #expect(reader.memory.contains("k"))
        memoryClock.advance(by: .milliseconds(599))
        #expect(reader.memory.value(forKey: "k") == [1])
        memoryClock.advance(by: .milliseconds(2))
        // The memory copy expired with the disk entry: 1.001 s after the set, not never.
        #expect(reader.memory.value(forKey: "k") == nil)
        diskClock.advance(by: 601)
        #expect(try reader.value(forKey: "k") == nil)
    }

    @Test func aDefaultTimeToLiveAppliesToSetsThatGiveNone() throws {
        let dir = CacheTestDirectory("coherence-default-ttl")
        let diskClock = ManualClock()
        let memoryClock = ManualMemoryClock()
        let cache = try bytesCache(dir, disk: diskClock, memory: memoryClock, defaultTimeToLive: .seconds(5))
        try cache.set([1], forKey: "default")
        try cache.set([2], forKey: "own", timeToLive: .seconds(60))
        #expect(try cache.disk.entry(forKey: "default")?.expiry == diskClock.now + 5_000)
        #expect(try cache.disk.entry(forKey: "own")?.expiry == diskClock.now + 60_000)
        memoryClock.advance(by: .milliseconds(5_001))
        #expect(cache.memory.value(forKey: "default") == nil)
        #expect(cache.memory.value(forKey: "own") == [2])
        // The disk side alone applies the default too.
        try cache.disk.set([3], forKey: "disk-only")
        #expect(try cache.disk.entry(forKey: "disk-only")?.expiry == diskClock.now + 5_000)
    }

    @Test func anotherCacheOnTheDirectoryDropsTheStaleMemoryCopy() throws {
        let dir = CacheTestDirectory("coherence-in-process")
        let first = try Cache<[UInt8]>(directory: dir.path)
        let second = try Cache<[UInt8]>(directory: dir.path)
        try first.set([1], forKey: "k")
        #expect(try second.value(forKey: "k") == [1])
        #expect(second.memory.contains("k"))
        try first.set([2], forKey: "k")
        #expect(try second.value(forKey: "k") == [2])
        #expect(try first.value(forKey: "k") == [2])
        try first.removeValue(forKey: "k")
        #expect(try second.value(forKey: "k") == nil)
        // Writes straight to the disk side reach the memory tier over it too.
        try second.set([3], forKey: "k")
        try second.disk.set([4], forKey: "k")
        #expect(try second.value(forKey: "k") == [4])
        try first.set([5], forKey: "j")
        #expect(try second.value(forKey: "j") == [5])
        try second.disk.removeAll()
        #expect(try first.value(forKey: "j") == nil)
        #expect(try second.value(forKey: "j") == nil)
    }

    @Test func costAndExtendedDataGoWithTheEntry() throws {
        let dir = CacheTestDirectory("coherence-cost")
        let cache = try Cache<[UInt8]>(directory: dir.path, memoryLimits: MemoryCacheLimits(totalCost: 100))
        try cache.set([1, 2, 3], forKey: "a", cost: 60, extendedData: [9, 9])
        try cache.set([4], forKey: "b", cost: 60)
        // The cost given, not the 3 serialized bytes, counted: "a" was evicted to fit "b".
        #expect(cache.memory.totalCost == 60)
        #expect(!cache.memory.contains("a"))
        let entry = try #require(try cache.entry(forKey: "a"))
        #expect(entry.value == [1, 2, 3])
        #expect(entry.extendedData == [9, 9])
        #expect(try cache.entry(forKey: "b")?.extendedData == nil)
    }

    @Test func observersHearWillAndDidAroundCallsAndMemoryEvictions() throws {
        let dir = CacheTestDirectory("coherence-events")
        let cache = try Cache<[UInt8]>(directory: dir.path, memoryLimits: MemoryCacheLimits(count: 1))
        let heard = Mutex<[String]>([])
        let observation = cache.observeEvents { event in heard.withLock { $0.append(event.description) } }
        try cache.set([1], forKey: "a")
        try cache.set([2], forKey: "b")  // evicts "a" from memory
        try cache.removeValue(forKey: "b")
        try cache.removeAll()
        observation.cancel()
        try cache.set([3], forKey: "c")
        #expect(
            heard.withLock { $0 } == [
                #"willAdd key "a" (both, thisProcess)"#, #"didAdd key "a" (both, thisProcess)"#,
                #"willAdd key "b" (both, thisProcess)"#, #"didEvict key "a" (memory, thisProcess)"#,
                #"didAdd key "b" (both, thisProcess)"#,
                #"willRemove key "b" (both, thisProcess)"#, #"didRemove key "b" (both, thisProcess)"#,
                "willRemoveAll all keys (both, thisProcess)", "didRemoveAll all keys (both, thisProcess)",
            ])
    }
}

/// The batched calls of `Cache` and the disk side's trims as events.
@Suite struct CacheBatchTests {
    @Test func batchedReadsAndRemovalsReachBothSides() throws {
        let dir = CacheTestDirectory("cache-batch")
        let cache = try Cache<[UInt8]>(directory: dir.path)
        let other = try Cache<[UInt8]>(directory: dir.path)
        for index in 0..<6 { try cache.set([UInt8(index)], forKey: "k\(index)") }
        try cache.set([UInt8](repeating: 1, count: 500), forKey: "big")
        // From memory here, from disk (then kept) in the other cache.
        #expect(try cache.values(forKeys: ["k1", "k2", "absent"]) == ["k1": [1], "k2": [2]])
        #expect(try other.values(forKeys: ["k1", "k2", "k1"]) == ["k1": [1], "k2": [2]])
        #expect(other.memory.contains("k1") && other.memory.contains("k2"))
        try cache.removeValues(forKeys: ["k1", "k3"])
        #expect(try other.values(forKeys: ["k1", "k2", "k3"]) == ["k2": [2]])
        #expect(!cache.memory.contains("k1"))
        #expect(try other.value(forKey: "big")?.count == 500)
        let report = try cache.removeValues(largerThan: 100)
        #expect(report.removedEntries == 1 && report.removedBytes == 500)
        #expect(try other.value(forKey: "big") == nil)
        #expect(try cache.value(forKey: "big") == nil)
    }

    @Test func aTrimOfThisProcessIsToldAsDiskEvictions() throws {
        let dir = CacheTestDirectory("cache-trim-events")
        let cache = try Cache<[UInt8]>(
            directory: dir.path, diskConfiguration: DiskCacheConfiguration(trimInterval: nil))
        for index in 0..<3 { try cache.set([UInt8(index)], forKey: "k\(index)") }
        let heard = Mutex<[CacheEvent]>([])
        let done = DispatchSemaphore(value: 0)
        let observation = cache.observeEvents { event in
            heard.withLock { $0.append(event) }
            if event.key == "k1" { done.signal() }
        }
        defer { observation.cancel() }
        try cache.disk.trim(toCount: 1)  // k0 and k1 go, least recently used first
        #expect(done.wait(timeout: .now() + 10) == .success)
        #expect(
            heard.withLock { $0 } == [
                CacheEvent(.didEvict, key: "k0", tier: .disk), CacheEvent(.didEvict, key: "k1", tier: .disk),
            ])
        #expect(!cache.memory.contains("k0") && cache.memory.contains("k2"))
    }
}
