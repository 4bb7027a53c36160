import MappedKVCache

/// MappedKVCache's `DiskCache` with its default configuration: a multi-process MappedKV manifest,
/// values up to 20 KiB inline in it, larger ones in their own files (written to a temporary file
/// and renamed into place under the manifest's lock), access times coalesced in memory.
final class MappedKVDiskCache: BenchDiskCache {
    let cache: DiskCache

    init(directory: String) throws {
        cache = try DiskCache(directory: directory, configuration: DiskCacheConfiguration())
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

/// MappedKVCache's `MemoryCache<String, [UInt8]>` at its count limit, with its defaults otherwise.
enum MappedKVCacheWorkloads {
    /// `memory_set` and `memory_get`: a cache limited to `entries` entries is filled with that many
    /// (untimed); then `entries` sets of new keys, each of which evicts the least recently used
    /// entry, and `entries` gets of those keys, every one a hit (checked). The values are the
    /// prebuilt 100-byte arrays, shared with the data, so neither a set nor an eviction copies or
    /// frees their bytes: the figures are the cache's own work.
    @inline(never)
    static func runMemory(data: CacheData, entries n: Int) throws -> CacheFigures {
        precondition(data.memoryKeys.count >= 2 * n && data.values.count >= n)
        let keys = data.memoryKeys
        let values = data.values
        let cache = MemoryCache<String, [UInt8]>(limits: MemoryCacheLimits(count: n))
        for i in 0..<n { cache.set(values[i], forKey: keys[i], cost: values[i].count) }
        guard cache.count == n else { throw BenchError("MemoryCache: holds \(cache.count) entries after \(n) sets") }

        var results: CacheFigures = [:]
        results[.memorySet] =
            Clock.measure {
                for i in 0..<n { cache.set(values[i], forKey: keys[n + i], cost: values[i].count) }
            } / Double(n)
        guard cache.count == n else { throw BenchError("MemoryCache: holds \(cache.count) entries, limit \(n)") }
        var bytes = 0
        var tags: UInt64 = 0
        results[.memoryGet] =
            Clock.measure {
                for i in 0..<n {
                    if let value = cache.value(forKey: keys[n + i]) {
                        bytes += value.count
                        tags &+= CacheData.tag(value)
                    }
                }
            } / Double(n)
        try CacheWorkloads.check(
            "MemoryCache", "memory_get", bytes: bytes, tags: tags, count: n, size: CacheData.valueSize)
        guard !cache.contains(keys[0]) else { throw BenchError("MemoryCache: \(keys[0]) was not evicted") }
        return results
    }
}
