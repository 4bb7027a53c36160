// The trimming rules of `MemoryCache`.
//
// Invariant: every trim evicts from the least recently used end, except the expiry sweep, which walks
// the whole list in the same order; each eviction is recorded in the caller's batch in the order it
// happened.

extension MemoryCacheState {
    /// Evicts entries that break the limits: first those aged out, then by count, then by cost.
    @inlinable
    mutating func trimToLimits(now: Int64, batch: inout EvictionBatch<Key, Value>) {
        if ageLimit != .max {
            trim(toAge: ageLimit, now: now, reason: .age, batch: &batch)
        }
        trim(toCount: countLimit, reason: .count, batch: &batch)
        trim(toCost: costLimit, reason: .cost, batch: &batch)
    }

    /// Evicts least recently used entries until at most `limit` remain.
    @inlinable
    mutating func trim(toCount limit: Int, reason: MemoryCacheEvictionReason, batch: inout EvictionBatch<Key, Value>) {
        while list.count > limit {
            evict(list.leastRecent, reason: reason, into: &batch)
        }
    }

    /// Evicts least recently used entries until their summed cost is at most `limit`.
    @inlinable
    mutating func trim(toCost limit: Int, reason: MemoryCacheEvictionReason, batch: inout EvictionBatch<Key, Value>) {
        while list.totalCost > limit {
            evict(list.leastRecent, reason: reason, into: &batch)
        }
    }

    /// Evicts the entries unread for `age` nanoseconds or longer at `now`.
    ///
    /// The list is in order of last access, so they are exactly a run at its least recently used end.
    @inlinable
    mutating func trim(
        toAge age: Int64, now: Int64, reason: MemoryCacheEvictionReason, batch: inout EvictionBatch<Key, Value>
    ) {
        while !list.isEmpty && self.age(of: list.leastRecent, now: now) >= age {
            evict(list.leastRecent, reason: reason, into: &batch)
        }
    }

    /// Evicts every expired entry, least recently used first. O(n) when any entry has a time to live,
    /// O(1) when none has.
    mutating func removeExpired(now: Int64, batch: inout EvictionBatch<Key, Value>) {
        guard list.expiringCount > 0 else { return }
        var index = list.leastRecent
        while index != List.none {
            let newer = list.newer(than: index)
            if list.expiry(at: index) <= now {
                evict(index, reason: .expired, into: &batch)
            }
            index = newer
        }
    }

    /// The periodic sweep: evicts expired entries, then those past the age limit.
    mutating func sweep(now reading: Int64, batch: inout EvictionBatch<Key, Value>) {
        let now = monotonic(reading)
        removeExpired(now: now, batch: &batch)
        if ageLimit != .max {
            trim(toAge: ageLimit, now: now, reason: .age, batch: &batch)
        }
    }

    /// Evicts expired entries, then least recently used ones until the count and the total cost are at
    /// most `memoryPressureFraction` of what they were on entry, then gives spare storage back.
    mutating func handleMemoryPressure(now reading: Int64, batch: inout EvictionBatch<Key, Value>) {
        let now = monotonic(reading)
        let countTarget = Self.share(memoryPressureFraction, of: list.count)
        let costTarget = Self.share(memoryPressureFraction, of: list.totalCost)
        removeExpired(now: now, batch: &batch)
        while list.count > countTarget || list.totalCost > costTarget {
            evict(list.leastRecent, reason: .memoryPressure, into: &batch)
        }
        compactIfSparse()
    }

    /// `fraction` of `amount`, rounded down, never more than `amount`.
    static func share(_ fraction: Double, of amount: Int) -> Int {
        guard fraction < 1 else { return amount }
        let share = (Double(amount) * fraction).rounded(.down)
        return share < Double(amount) ? max(Int(share), 0) : amount
    }

    /// Rebuilds the list and its index when at most a quarter of the node slots are live, so that memory
    /// freed by evictions goes back to the allocator. The order of the entries is kept.
    mutating func compactIfSparse() {
        guard list.nodes.count > 16, list.count <= list.nodes.count / 4 else { return }
        list = list.compacted()
    }
}
