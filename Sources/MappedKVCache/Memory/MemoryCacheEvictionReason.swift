// Why a `MemoryCache` dropped an entry by itself.
//
// Invariant: each case names one rule of the cache; explicit removals (`removeValue(forKey:)`,
// `removeAll()`, replacing a value) are the caller's doing and have no case.

/// Why a ``MemoryCache`` evicted an entry, as reported to its `onEviction` handler.
///
/// Only entries the cache drops by itself are evictions. Removing a value with
/// `removeValue(forKey:)`, clearing the cache with `removeAll()` and replacing a value with `set` are
/// not reported.
public enum MemoryCacheEvictionReason: Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// The count limit was exceeded (by a store, a change of limits or `trim(toCount:)`), or it is zero.
    case count
    /// The total-cost limit was exceeded (by a store, a change of limits or `trim(toCost:)`), or the
    /// entry's own cost is larger than the limit.
    case cost
    /// The entry went unread for the age limit (or for the age given to `trim(toAge:)`).
    case age
    /// The entry's time to live ran out; it was found on a lookup or by a sweep.
    case expired
    /// `handleMemoryPressure()` dropped it.
    case memoryPressure

    /// The case's name.
    public var description: String {
        switch self {
        case .count: "count"
        case .cost: "cost"
        case .age: "age"
        case .expired: "expired"
        case .memoryPressure: "memoryPressure"
        }
    }
}
