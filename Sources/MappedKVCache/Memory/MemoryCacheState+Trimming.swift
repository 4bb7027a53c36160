// The trimming rules of `MemoryCache`.
//
// Invariant: every trim by count, cost or memory pressure evicts the entry `nextVictim()` names (the
// oldest in the queue not read since it was queued); the walks by expiry and by age visit the queue
// from the same end; each eviction is recorded in the caller's batch in the order it happened.

extension MemoryCacheState {
    /// Evicts entries that break the limits: first those aged out at the eviction end of the queue,
    /// then by count, then by cost.
    @inlinable
    mutating func trimToLimits(now: Int64, batch: inout EvictionBatch<Key, Value>) {
        if ageLimit != .max {
            trimEvictionEnd(toAge: ageLimit, now: now, batch: &batch)
        }
        trim(toCount: countLimit, reason: .count, batch: &batch)
        trim(toCost: costLimit, reason: .cost, batch: &batch)
    }

    /// Evicts entries in second-chance order until at most `limit` remain.
    @inlinable
    mutating func trim(toCount limit: Int, reason: MemoryCacheEvictionReason, batch: inout EvictionBatch<Key, Value>) {
        while list.count > limit {
            evict(list.nextVictim(), reason: reason, into: &batch)
        }
    }

    /// Evicts entries in second-chance order until their summed cost is at most `limit`.
    @inlinable
    mutating func trim(toCost limit: Int, reason: MemoryCacheEvictionReason, batch: inout EvictionBatch<Key, Value>) {
        while list.totalCost > limit {
            evict(list.nextVictim(), reason: reason, into: &batch)
        }
    }

    /// What a store does for the age limit: from the eviction end of the queue, evicts the entries
    /// unread for `age` nanoseconds or longer at `now` and gives read ones their second chance, until
    /// the first entry that is neither. Amortized O(1): each second chance uses up a read.
    ///
    /// An entry queued again for a read is older than its place in the queue says, so it may age out
    /// behind younger entries; ``removeAged(_:now:batch:)`` finds those too.
    @inlinable
    mutating func trimEvictionEnd(toAge age: Int64, now: Int64, batch: inout EvictionBatch<Key, Value>) {
        while !list.isEmpty {
            let oldest = list.oldest
            if self.age(of: oldest, now: now) >= age {
                evict(oldest, reason: .age, into: &batch)
            } else if list.isReferenced(oldest) {
                list.giveSecondChance(oldest)
            } else {
                return
            }
        }
    }

    /// Evicts every entry unread for `age` nanoseconds or longer at `now`, in queue order. O(n).
    mutating func removeAged(_ age: Int64, now: Int64, batch: inout EvictionBatch<Key, Value>) {
        var index = list.oldest
        while index != List.none {
            let newer = list.newer(than: index)
            if self.age(of: index, now: now) >= age {
                evict(index, reason: .age, into: &batch)
            }
            index = newer
        }
    }

    /// Evicts every expired entry, in queue order. O(n) when any entry has a time to live, O(1) when
    /// none has.
    mutating func removeExpired(now: Int64, batch: inout EvictionBatch<Key, Value>) {
        guard list.expiringCount > 0 else { return }
        var index = list.oldest
        while index != List.none {
            let newer = list.newer(than: index)
            if list.expiry(at: index) <= now {
                evict(index, reason: .expired, into: &batch)
            }
            index = newer
        }
    }

    /// The periodic sweep: evicts expired entries, then those past the age limit. O(n) when any entry
    /// has a time to live or the cache has an age limit, O(1) otherwise.
    mutating func sweep(now reading: Int64, batch: inout EvictionBatch<Key, Value>) {
        let now = monotonic(reading)
        removeExpired(now: now, batch: &batch)
        if ageLimit != .max {
            removeAged(ageLimit, now: now, batch: &batch)
        }
    }

    /// Evicts expired entries, then entries in second-chance order until the count and the total cost
    /// are at most `memoryPressureFraction` of what they were on entry, then gives spare storage back.
    mutating func handleMemoryPressure(now reading: Int64, batch: inout EvictionBatch<Key, Value>) {
        let now = monotonic(reading)
        let countTarget = Self.share(memoryPressureFraction, of: list.count)
        let costTarget = Self.share(memoryPressureFraction, of: list.totalCost)
        removeExpired(now: now, batch: &batch)
        while list.count > countTarget || list.totalCost > costTarget {
            evict(list.nextVictim(), reason: .memoryPressure, into: &batch)
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
