import MappedKVCache

/// MappedKVCache's `DiskCache` with its default configuration: a multi-process MappedKV manifest,
/// values up to 20 KiB inline in it, larger ones in their own files (written to a temporary file
/// and renamed into place under the manifest's lock), access times coalesced in memory.
final class MappedKVDiskCache: BenchDiskCache {
    let cache: DiskCache

    init(directory: String) throws {
        cache = try DiskCache(
            directory: directory, configuration: DiskCacheConfiguration(metrics: BenchMetrics.options))
    }

    // Not inlined, like MappedKVStore's setters: out of line they are plain direct calls from the
    // specialized driver.
    @inline(never)
    func set(_ value: [UInt8], forKey key: String) throws { try cache.set(value, forKey: key) }

    @inline(never)
    func value(forKey key: String) throws -> [UInt8]? { try cache.value(forKey: key) }

    func trim(toCount count: Int) throws { try cache.trim(toCount: count) }

    func statistics() throws -> CacheTotals {
        let statistics = try cache.statistics()
        return CacheTotals(count: statistics.count, bytes: statistics.bytes)
    }

    func close() throws { cache.close() }
}

/// MappedKVCache's `MemoryCache<String, [UInt8]>` at its count limit, with its defaults otherwise;
/// a value's cost is its size.
final class MappedKVMemoryCache: BenchMemoryCache {
    let cache: MemoryCache<String, [UInt8]>

    init(countLimit: Int) { cache = MemoryCache(limits: MemoryCacheLimits(count: countLimit)) }

    @inline(__always)
    func set(_ value: [UInt8], forKey key: String) { cache.set(value, forKey: key, cost: value.count) }

    @inline(__always)
    func value(forKey key: String) -> [UInt8]? { cache.value(forKey: key) }

    func contains(_ key: String) -> Bool { cache.contains(key) }

    var count: Int { cache.count }
}

/// The memory side of MappedKVCache's `Cache<[UInt8]>`, read through the cache.
enum TieredCacheWorkloads {
    /// `cache_memory_get` and `cache_memory_get_random`: a `Cache<[UInt8]>` whose memory side is
    /// limited to `entries` entries goes through the sets of `memory_set` (the first `entries`
    /// memory keys, then as many new ones, each evicting one from memory; all untimed, and all
    /// written to disk too); then `entries` gets of the new keys through `value(forKey:)`, in
    /// order and in `memory_get_random`'s order. Every get must be a memory hit (the memory side's
    /// statistics count them) and return the right value.
    @inline(never)
    static func run(data: CacheData, entries n: Int, directory: String) throws -> CacheFigures {
        precondition(data.memoryKeys.count >= 2 * n && data.values.count >= n)
        let keys = data.memoryKeys
        let values = data.values
        let cache = try Cache<[UInt8]>(
            directory: "\(directory)/tiered", memoryLimits: MemoryCacheLimits(count: n),
            diskConfiguration: DiskCacheConfiguration(metrics: BenchMetrics.options))
        defer { cache.close() }
        for i in 0..<n { try cache.set(values[i], forKey: keys[i]) }
        for i in 0..<n { try cache.set(values[i], forKey: keys[n + i]) }
        guard cache.memory.count == n, !cache.memory.contains(keys[0]) else {
            throw BenchError("Cache: its memory side holds \(cache.memory.count) entries, limit \(n)")
        }
        let inOrder = Array(keys[n..<2 * n])
        let random = RandomOrder.shuffled(inOrder, seed: RandomOrder.getSeed)
        CacheWorkloads.settle()
        var results: CacheFigures = [:]
        // Each pair in the order A B B A, each figure the mean of its two passes, so that neither
        // side gains from following the other (the second pass over the same entries finds more
        // of them in the processor's caches).
        for (keys, workload, tier) in [
            (inOrder, CacheWorkload.cacheMemoryGet, CacheWorkload.cacheTierGet),
            (random, .cacheMemoryGetRandom, .cacheTierGetRandom),
        ] {
            let first = try timeGets(cache, keys: keys, workload: workload)
            let tierFirst = try timeTierGets(cache.memory, keys: keys, workload: tier)
            let tierSecond = try timeTierGets(cache.memory, keys: keys, workload: tier)
            let second = try timeGets(cache, keys: keys, workload: workload)
            results[workload] = (first + second) / 2
            results[tier] = (tierFirst + tierSecond) / 2
        }
        return results
    }

    /// The gets of ``timeGets(_:keys:workload:)`` straight from the cache's memory tier: the same
    /// `MemoryCache`, entries and keys, without the check of other processes' changes.
    @inline(__always)
    private static func timeTierGets(
        _ memory: MemoryCache<String, [UInt8]>, keys: [String], workload: CacheWorkload
    ) throws -> Double {
        let hits = memory.statistics.hits
        var bytes = 0
        var tags: UInt64 = 0
        let elapsed = Clock.measure {
            for i in 0..<keys.count {
                if let value = memory.value(forKey: keys[i]) {
                    bytes += value.count
                    tags &+= CacheData.tag(value)
                }
            }
        }
        try CacheWorkloads.check(
            "Cache.memory", workload.rawValue, bytes: bytes, tags: tags, count: keys.count, size: CacheData.valueSize)
        guard memory.statistics.hits - hits == keys.count else {
            throw BenchError("Cache.memory: \(workload.rawValue) missed")
        }
        return elapsed / Double(keys.count)
    }

    @inline(__always)
    private static func timeGets(_ cache: Cache<[UInt8]>, keys: [String], workload: CacheWorkload) throws -> Double {
        let hits = cache.memory.statistics.hits
        var bytes = 0
        var tags: UInt64 = 0
        let elapsed = try Clock.measure {
            for i in 0..<keys.count {
                if let value = try cache.value(forKey: keys[i]) {
                    bytes += value.count
                    tags &+= CacheData.tag(value)
                }
            }
        }
        try CacheWorkloads.check(
            "Cache", workload.rawValue, bytes: bytes, tags: tags, count: keys.count, size: CacheData.valueSize)
        let memoryHits = cache.memory.statistics.hits - hits
        guard memoryHits == keys.count else {
            throw BenchError("Cache: \(workload.rawValue) hit memory \(memoryHits) times in \(keys.count) gets")
        }
        return elapsed / Double(keys.count)
    }
}
