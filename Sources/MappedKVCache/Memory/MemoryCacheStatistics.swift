// The counters a `MemoryCache` keeps.
//
// Invariant: every lookup counts as exactly one hit or one miss, and every eviction reported to
// `onEviction` (whether or not a handler is set) counts exactly once.

/// A snapshot of a ``MemoryCache``'s counters since it was made or its statistics were last reset.
public struct MemoryCacheStatistics: Sendable, Hashable {
    /// Lookups that found a live value.
    public var hits: Int
    /// Lookups that found nothing, or found an entry that had expired or aged out.
    public var misses: Int
    /// Entries the cache dropped by itself, for any ``MemoryCacheEvictionReason``. Explicit removals
    /// and replaced values are not evictions.
    public var evictions: Int

    /// Makes a snapshot from its counters.
    ///
    /// - Parameters:
    ///   - hits: Lookups that found a live value.
    ///   - misses: Lookups that found nothing.
    ///   - evictions: Entries the cache dropped by itself.
    public init(hits: Int = 0, misses: Int = 0, evictions: Int = 0) {
        self.hits = hits
        self.misses = misses
        self.evictions = evictions
    }

    /// All lookups: hits and misses.
    public var lookups: Int { hits + misses }

    /// The share of lookups that hit, from 0 to 1; 0 before the first lookup.
    public var hitRate: Double { lookups == 0 ? 0 : Double(hits) / Double(lookups) }
}
