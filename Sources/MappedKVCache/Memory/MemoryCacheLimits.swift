// The bounds a `MemoryCache` keeps.
//
// Invariant: a limit left `nil` never evicts anything; a set count or cost limit holds whenever a call
// that stores or changes limits returns; no entry past the age limit is ever returned.

/// The bounds a ``MemoryCache`` keeps, each optional.
///
/// Storing a value or changing the limits evicts entries, in the eviction order ``MemoryCache``
/// describes, until the count and cost limits hold again, before the call returns. The age limit is
/// kept by reads (an entry past it is a miss), by every store at the eviction end of the queue, and
/// fully by each sweep (see ``MemoryCache/trimExpiredAndAged()``).
public struct MemoryCacheLimits: Sendable, Hashable {
    /// The largest number of entries, or `nil` for no limit. Must not be negative.
    public var count: Int?
    /// The largest summed cost of the entries, or `nil` for no limit. Must not be negative.
    public var totalCost: Int?
    /// How long an entry may go unread (counted from when it was stored or last read) before it is
    /// evicted, or `nil` for no limit. An entry whose age reaches the limit is a miss, and counts in
    /// ``MemoryCache/count`` until it is evicted. Must not be negative.
    public var age: Duration?

    /// Makes limits; each one left `nil` does not bound the cache.
    ///
    /// - Parameters:
    ///   - count: The largest number of entries.
    ///   - totalCost: The largest summed cost of the entries.
    ///   - age: How long an entry may go unread before it is evicted.
    public init(count: Int? = nil, totalCost: Int? = nil, age: Duration? = nil) {
        self.count = count
        self.totalCost = totalCost
        self.age = age
    }

    /// No limits: the cache grows until entries are removed, expire or are trimmed by hand.
    public static var unlimited: MemoryCacheLimits { MemoryCacheLimits() }
}
