import Synchronization

/// The floor of the memory rows: a `Dictionary` behind a `Synchronization.Mutex`, evicting in
/// insertion order at a count limit, and nothing else (no recency, cost, age, expiry, statistics
/// or eviction handler). What a thread-safe bounded memory cache cannot do with less.
///
/// Invariant: `order` holds exactly the dictionary's keys, each once; once the cache is full,
/// `order[head]` is the oldest, which the next new key replaces.
final class FIFODictionaryCache: BenchMemoryCache {
    struct State {
        var values: [String: [UInt8]] = [:]
        /// The keys in insertion order, as a ring once it holds `limit` of them.
        var order: [String] = []
        var head = 0
        let limit: Int
    }

    let state: Mutex<State>

    init(countLimit: Int) {
        precondition(countLimit > 0, "FIFODictionaryCache: the count limit must be positive")
        var state = State(limit: countLimit)
        state.order.reserveCapacity(countLimit)
        self.state = Mutex(state)
    }

    /// Stores `value`; a new key evicts the oldest key once the cache is full, a replaced value
    /// keeps its key's place.
    @inline(__always)
    func set(_ value: [UInt8], forKey key: String) {
        state.withLock { state in
            guard state.values.updateValue(value, forKey: key) == nil else { return }
            guard state.order.count == state.limit else {
                state.order.append(key)
                return
            }
            state.values.removeValue(forKey: state.order[state.head])
            state.order[state.head] = key
            state.head = state.head + 1 == state.limit ? 0 : state.head + 1
        }
    }

    @inline(__always)
    func value(forKey key: String) -> [UInt8]? { state.withLock { $0.values[key] } }

    func contains(_ key: String) -> Bool { state.withLock { $0.values[key] != nil } }

    var count: Int { state.withLock { $0.values.count } }
}
