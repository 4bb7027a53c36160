// One entry of a `MemoryCache` as a listing reports it, and the orders a listing can take.
//
// Invariant: a listing entry is a copy taken under the cache's lock; holding it keeps the value
// alive but does not keep the entry in the cache, and changing it changes nothing there.

/// One live entry of a ``MemoryCache``, as ``MemoryCache/entries(order:)`` lists it.
public struct MemoryCacheEntry<Key: Hashable & Sendable, Value: Sendable>: Sendable {
    /// The entry's key.
    public var key: Key
    /// The value stored for it.
    public var value: Value
    /// The cost it was stored with.
    public var cost: Int
    /// How long the entry had left to live when it was listed, or nil if it never expires.
    public var timeToLive: Duration?

    /// Makes an entry.
    ///
    /// - Parameters:
    ///   - key: The entry's key.
    ///   - value: The value stored for it.
    ///   - cost: The cost it was stored with.
    ///   - timeToLive: How long it has left to live, or nil for never.
    public init(key: Key, value: Value, cost: Int, timeToLive: Duration? = nil) {
        self.key = key
        self.value = value
        self.cost = cost
        self.timeToLive = timeToLive
    }
}

extension MemoryCacheEntry: Equatable where Value: Equatable {}

/// The order in which ``MemoryCache/entries(order:)`` lists entries.
public enum MemoryCacheEntryOrder: Sendable, Hashable, CaseIterable {
    /// Least recently used first: the entry whose last store or read is the oldest comes first.
    case leastRecentFirst
    /// Most recently used first: the entry read or stored last comes first.
    case mostRecentFirst
}
