/// A bounded memory cache under benchmark: MappedKVCache's `MemoryCache`, or the
/// ``FIFODictionaryCache`` floor. As with ``BenchValueStore``, every conforming type is a
/// `final class` and the driver is generic over it, so each gets its own specialized loops.
protocol BenchMemoryCache: AnyObject {
    /// An empty cache that holds at most `countLimit` entries.
    init(countLimit: Int)
    func set(_ value: [UInt8], forKey key: String)
    func value(forKey key: String) -> [UInt8]?
    func contains(_ key: String) -> Bool
    var count: Int { get }
}

/// The memory rows, the same loops for every memory cache: the prebuilt key and value arrays
/// indexed by i, and one call.
///
/// The values are the prebuilt 100-byte arrays, shared with the data, so neither a set nor an
/// eviction copies or frees their bytes: the figures are the caches' own work.
enum MemoryWorkloads {
    /// A cache limited to `entries` entries is filled with that many (untimed); then `memory_set`:
    /// `entries` sets of new keys, each evicting one; `memory_get`: `entries` gets of those keys,
    /// every one a hit (checked), and `memory_get_random`: the same gets in a seeded random order.
    /// Then `memory_set_random`: a second cache filled the same way takes the sets of
    /// `memory_set` in a seeded random order.
    @inline(never)
    static func run<C: BenchMemoryCache>(_: C.Type, data: CacheData, entries n: Int) throws -> CacheFigures {
        precondition(data.memoryKeys.count >= 2 * n && data.values.count >= n)
        let name = String(describing: C.self)
        let keys = data.memoryKeys
        let values = data.values
        let readKeys = RandomOrder.shuffled(Array(keys[n..<2 * n]), seed: RandomOrder.getSeed)
        let setOrder = RandomOrder.permutation(n, seed: RandomOrder.setSeed)
        let setKeys = setOrder.map { keys[n + $0] }
        let setValues = setOrder.map { values[$0] }
        var results: CacheFigures = [:]

        do {
            let cache = try filled(C.self, data: data, entries: n)
            results[.memorySet] =
                Clock.measure {
                    for i in 0..<n { cache.set(values[i], forKey: keys[n + i]) }
                } / Double(n)
            try checkEvicted(cache, name: name, data: data, entries: n)
            results[.memoryGet] = try timeGets(cache, keys: Array(keys[n..<2 * n]), name: name, workload: .memoryGet)
            results[.memoryGetRandom] = try timeGets(cache, keys: readKeys, name: name, workload: .memoryGetRandom)
        }
        do {
            let cache = try filled(C.self, data: data, entries: n)
            results[.memorySetRandom] =
                Clock.measure {
                    for i in 0..<n { cache.set(setValues[i], forKey: setKeys[i]) }
                } / Double(n)
            try checkEvicted(cache, name: name, data: data, entries: n)
        }
        return results
    }

    /// A new cache holding the first `n` memory keys (untimed).
    private static func filled<C: BenchMemoryCache>(_: C.Type, data: CacheData, entries n: Int) throws -> C {
        let cache = C(countLimit: n)
        for i in 0..<n { cache.set(data.values[i], forKey: data.memoryKeys[i]) }
        guard cache.count == n else {
            throw BenchError("\(C.self): holds \(cache.count) entries after \(n) sets")
        }
        return cache
    }

    /// `keys.count` gets, every one a hit (checked), in ns per get.
    @inline(__always)
    private static func timeGets<C: BenchMemoryCache>(
        _ cache: C, keys: [String], name: String, workload: CacheWorkload
    ) throws -> Double {
        var bytes = 0
        var tags: UInt64 = 0
        let elapsed = Clock.measure {
            for i in 0..<keys.count {
                if let value = cache.value(forKey: keys[i]) {
                    bytes += value.count
                    tags &+= CacheData.tag(value)
                }
            }
        }
        try CacheWorkloads.check(
            name, workload.rawValue, bytes: bytes, tags: tags, count: keys.count, size: CacheData.valueSize)
        return elapsed / Double(keys.count)
    }

    /// After `n` sets of new keys into a full cache of `n`: `n` entries, the first key gone.
    private static func checkEvicted<C: BenchMemoryCache>(
        _ cache: C, name: String, data: CacheData, entries n: Int
    ) throws {
        guard cache.count == n else { throw BenchError("\(name): holds \(cache.count) entries, limit \(n)") }
        guard !cache.contains(data.memoryKeys[0]) else {
            throw BenchError("\(name): \(data.memoryKeys[0]) was not evicted")
        }
    }
}
