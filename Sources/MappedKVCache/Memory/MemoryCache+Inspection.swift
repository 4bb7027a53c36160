// Read-only views of `MemoryCache` for tests and diagnostics.
//
// Invariant: nothing here changes the cache: no recency order, counter or entry moves.

extension MemoryCache {
    /// The keys, least recently used first (the next to be evicted first). O(n).
    var keysLeastRecentlyUsedFirst: [Key] {
        lockedState.withLock { $0.keysLeastRecentFirst }
    }

    /// The entries with their costs, least recently used first. O(n).
    var entriesLeastRecentlyUsedFirst: [(key: Key, value: Value, cost: Int)] {
        lockedState.withLock { state in
            state.list.indicesLeastRecentFirst.map { index in
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
