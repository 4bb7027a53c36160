// Read-only views of `MemoryCache`: the public listing, and helpers for tests and diagnostics.
//
// Invariant: nothing here changes the cache: no queue position, second-chance mark, counter, clock
// reading or entry moves.

extension MemoryCache {
    /// An entry as ``entries(order:)`` lists it.
    public typealias Entry = MemoryCacheEntry<Key, Value>

    /// The live entries, least recently used first by default, with their costs and the time each
    /// has left to live. O(n log n), under the cache's lock.
    ///
    /// The order is exact: by each entry's last store or read. It is not exactly the eviction order,
    /// which gives entries read since they were queued a second chance whatever the order of those
    /// reads (see ``MemoryCache``).
    ///
    /// Listing is not reading: it changes neither the eviction order nor the statistics, and
    /// evicts nothing. Entries that have expired or aged out but have not been evicted yet are
    /// left out (so there may be fewer entries than ``count``), as a read would miss them.
    ///
    /// ```swift
    /// for entry in cache.entries(order: .mostRecentFirst) { print(entry.key, entry.cost) }
    /// ```
    ///
    /// - Parameter order: ``MemoryCacheEntryOrder/leastRecentFirst`` or
    ///   ``MemoryCacheEntryOrder/mostRecentFirst``.
    /// - Returns: A copy of each live entry, in `order`.
    public func entries(order: MemoryCacheEntryOrder = .leastRecentFirst) -> [Entry] {
        let reading = clock.nanoseconds
        return lockedState.withLock { state in
            // The time `monotonic` would give, without recording the reading.
            let now = max(reading, state.latestTime)
            var indices = state.list.indicesLeastRecentFirst
            if order == .mostRecentFirst { indices.reverse() }
            return indices.compactMap { index -> Entry? in
                guard state.deadReason(index, now: now) == nil else { return nil }
                let expiry = state.list.expiry(at: index)
                return Entry(
                    key: state.list.key(at: index), value: state.list.value(at: index),
                    cost: state.list.cost(at: index),
                    timeToLive: expiry == .max ? nil : .nanoseconds(expiry - now))
            }
        }
    }

    /// The keys in queue order (the next one eviction considers first), dead entries included. O(n).
    var keysInEvictionOrder: [Key] {
        lockedState.withLock { $0.keysInEvictionOrder }
    }

    /// The entries with their costs in queue order, dead entries included. O(n).
    var entriesInEvictionOrder: [(key: Key, value: Value, cost: Int)] {
        lockedState.withLock { state in
            state.list.indicesInQueueOrder.map { index in
                (state.list.key(at: index), state.list.value(at: index), state.list.cost(at: index))
            }
        }
    }

    /// The number of node slots, live or free, the cache has allocated.
    var slotCapacity: Int {
        lockedState.withLock { $0.list.nodes.count }
    }

    /// A description of the first broken internal invariant, or `nil` when the cache is sound. O(n).
    func invariantViolation() -> String? {
        lockedState.withLock { $0.invariantViolation() }
    }

    /// The automatic trimming task, if the cache has one.
    var automaticTrimTask: Task<Void, Never>? {
        trimTask.withLock { $0 }
    }
}
