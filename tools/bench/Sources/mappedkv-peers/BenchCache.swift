/// Something that stores byte values under string keys on disk: a cache design, or the plain-file
/// floor of the large-value workload.
///
/// As with ``BenchStore``, every conforming type is a `final class` and the drivers
/// (``CacheWorkloads``) are generic over it and called with the concrete type, so each design gets
/// its own specialized copy of the timed loops.
protocol BenchValueStore: AnyObject {
    /// Opens the store in `directory` (created if missing), loading whatever it already holds.
    init(directory: String) throws

    func set(_ value: [UInt8], forKey key: String) throws
    func value(forKey key: String) throws -> [UInt8]?

    /// Releases the store. Not timed.
    func close() throws
}

/// A disk cache under benchmark: a value store that can also drop its least recently used entries
/// and report what it holds.
protocol BenchDiskCache: BenchValueStore {
    /// Removes the least recently used entries until at most `count` remain.
    func trim(toCount count: Int) throws

    /// How many entries the cache holds and the bytes of their values.
    func statistics() throws -> CacheTotals
}

/// What a cache reports it holds.
struct CacheTotals {
    var count: Int
    var bytes: Int
}
