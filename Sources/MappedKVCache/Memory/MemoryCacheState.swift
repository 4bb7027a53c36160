// What `MemoryCache` guards with its lock.
//
// Invariant: every stored time is the latest clock reading seen so far, so no entry was used later
// than `latestTime`; every entry the cache drops by itself is counted and recorded in the caller's
// `EvictionBatch`.

/// The state of a ``MemoryCache``: the indexed second-chance queue, the limits and the counters.
///
/// Every method expects the cache's lock to be held and does only bookkeeping: values leave through
/// an ``EvictionBatch`` so that handlers run, and values are destroyed, after the lock is released.
@usableFromInline
struct MemoryCacheState<Key: Hashable & Sendable, Value: Sendable>: Sendable {
    /// A handler for evictions.
    @usableFromInline typealias Handler = @Sendable (Key, Value, MemoryCacheEvictionReason) -> Void
    /// The queue's type.
    @usableFromInline typealias List = SecondChanceList<Key, Value>

    /// The entries in eviction order, indexed by key.
    @usableFromInline var list = List()
    /// The limits as given.
    @usableFromInline private(set) var limits = MemoryCacheLimits()
    /// The count limit; `Int.max` for none.
    @usableFromInline private(set) var countLimit = Int.max
    /// The total-cost limit; `Int.max` for none.
    @usableFromInline private(set) var costLimit = Int.max
    /// The age limit in nanoseconds; `Int64.max` for none.
    @usableFromInline private(set) var ageLimit = Int64.max
    /// The share of count and cost that `handleMemoryPressure` keeps.
    @usableFromInline var memoryPressureFraction: Double
    /// Hears every eviction, after the lock is released.
    @usableFromInline var onEviction: Handler?
    /// The counters.
    @usableFromInline var statistics = MemoryCacheStatistics()
    /// The latest clock reading seen.
    @usableFromInline var latestTime = Int64.min

    init(limits: MemoryCacheLimits, memoryPressureFraction: Double, onEviction: Handler?) {
        self.memoryPressureFraction = memoryPressureFraction
        self.onEviction = onEviction
        setLimits(limits)
    }

    /// `reading`, or the latest reading seen if the clock went backwards.
    @inlinable
    mutating func monotonic(_ reading: Int64) -> Int64 {
        if reading > latestTime { latestTime = reading }
        return latestTime
    }

    /// Takes new limits; the caller trims afterwards.
    mutating func setLimits(_ newLimits: MemoryCacheLimits) {
        precondition((newLimits.count ?? 0) >= 0, "MemoryCache: the count limit must not be negative")
        precondition((newLimits.totalCost ?? 0) >= 0, "MemoryCache: the cost limit must not be negative")
        precondition((newLimits.age ?? .zero) >= .zero, "MemoryCache: the age limit must not be negative")
        limits = newLimits
        countLimit = newLimits.count ?? .max
        costLimit = newLimits.totalCost ?? .max
        ageLimit = newLimits.age.map(MemoryCacheClock.nanoseconds) ?? .max
    }

    /// Why the live entry at `index` can no longer be read at `now`, or `nil` if it can.
    @inlinable
    func deadReason(_ index: Int, now: Int64) -> MemoryCacheEvictionReason? {
        Self.deadReason(
            expiry: list.expiry(at: index), lastAccess: list.lastAccess(at: index), ageLimit: ageLimit, now: now)
    }

    /// Why an entry that expires at `expiry` and was last used at `lastAccess` can no longer be read
    /// at `now` under `ageLimit`, or `nil` if it can.
    ///
    /// Static, on plain values: the hit path calls it from a mutating method, where calling a method
    /// on `self` made the optimizer copy the whole state (216 bytes) for the call.
    @inlinable
    static func deadReason(
        expiry: Int64, lastAccess: Int64, ageLimit: Int64, now: Int64
    ) -> MemoryCacheEvictionReason? {
        if expiry <= now { return .expired }
        if ageLimit != .max && age(since: lastAccess, now: now) >= ageLimit { return .age }
        return nil
    }

    /// How long the live entry at `index` has gone unread at `now`, in nanoseconds.
    @inlinable
    func age(of index: Int, now: Int64) -> Int64 {
        Self.age(since: list.lastAccess(at: index), now: now)
    }

    /// The time from `lastAccess` to `now` in nanoseconds, saturated (`now` is never earlier than an
    /// entry's last access, so the difference is never negative).
    @inlinable
    static func age(since lastAccess: Int64, now: Int64) -> Int64 {
        let (age, overflow) = now.subtractingReportingOverflow(lastAccess)
        return overflow ? .max : age
    }

    /// Evicts the live entry at `index` for `reason`.
    @inlinable
    mutating func evict(_ index: Int, reason: MemoryCacheEvictionReason, into batch: inout EvictionBatch<Key, Value>) {
        let (key, value) = list.remove(index)
        statistics.evictions += 1
        batch.append(key: key, value: value, reason: reason)
    }

    /// What ``liveValue(forKey:now:)`` found.
    @usableFromInline
    enum Lookup {
        /// A live entry, now marked as read and counted as a hit.
        case hit(Value)
        /// No entry, counted as a miss.
        case absent
        /// An entry that expired or aged out, left as it was and not counted: the caller evicts it
        /// through ``value(forKey:now:batch:)``.
        case dead
    }

    /// The hit path of a lookup: like ``value(forKey:now:batch:)``, but a dead entry is left for that
    /// method (with the eviction batch only it needs) to evict and count.
    @inlinable
    mutating func liveValue(forKey key: Key, now reading: Int64) -> Lookup {
        guard let (index, slot) = list.locate(key) else {
            statistics.misses += 1
            return .absent
        }
        let now = monotonic(reading)
        let reason = Self.deadReason(
            expiry: list.expiry(at: index), lastAccess: list.lastAccess(at: index), ageLimit: ageLimit, now: now)
        guard reason == nil else { return .dead }
        statistics.hits += 1
        list.touch(index, time: now)
        return .hit(list.value(inSlot: slot))
    }

    /// Looks `key` up at `now`: a live entry is marked as read (see ``SecondChanceList/touch(_:time:)``);
    /// a dead one is evicted.
    @inlinable
    mutating func value(forKey key: Key, now reading: Int64, batch: inout EvictionBatch<Key, Value>) -> Value? {
        guard let (index, slot) = list.locate(key) else {
            statistics.misses += 1
            return nil
        }
        let now = monotonic(reading)
        let reason = Self.deadReason(
            expiry: list.expiry(at: index), lastAccess: list.lastAccess(at: index), ageLimit: ageLimit, now: now)
        if let reason {
            evict(index, reason: reason, into: &batch)
            statistics.misses += 1
            return nil
        }
        statistics.hits += 1
        list.touch(index, time: now)
        return list.value(inSlot: slot)
    }

    /// Whether `key` has a live entry at `now`; changes neither order nor counters.
    @inlinable
    mutating func contains(_ key: Key, now reading: Int64) -> Bool {
        guard let index = list.find(key) else { return false }
        return deadReason(index, now: monotonic(reading)) == nil
    }

    /// Stores `value` for `key`, queued last, then trims to the limits.
    ///
    /// A value that could not be kept even alone (its time to live is not positive, the count limit is
    /// zero, its cost exceeds the cost limit, or the age limit is zero) removes any entry for `key` and
    /// is evicted at once; only entries past the age limit are evicted after it.
    @inlinable
    mutating func set(
        _ value: Value, forKey key: Key, cost: Int, timeToLive: Duration?, now reading: Int64,
        batch: inout EvictionBatch<Key, Value>
    ) {
        precondition(cost >= 0, "MemoryCache: a cost must not be negative")
        let now = monotonic(reading)
        var expiry = Int64.max
        if let timeToLive {
            let lifetime = MemoryCacheClock.nanoseconds(timeToLive)
            if lifetime <= 0 {
                expiry = now
            } else {
                // `Int64.max` stands for no expiry, so a distant deadline stops just short of it.
                let (deadline, overflow) = now.addingReportingOverflow(lifetime)
                expiry = overflow ? .max - 1 : min(deadline, .max - 1)
            }
        }
        if let reason = rejection(cost: cost, expiry: expiry, now: now) {
            if let index = list.find(key) {
                batch.released = list.remove(index).value
            }
            statistics.evictions += 1
            batch.append(key: key, value: value, reason: reason)
        } else {
            batch.released = list.store(value, forKey: key, cost: cost, time: now, expiry: expiry)
        }
        trimToLimits(now: now, batch: &batch)
    }

    /// Why a new entry would be evicted as soon as it is stored, or `nil` if it can be kept.
    @inlinable
    func rejection(cost: Int, expiry: Int64, now: Int64) -> MemoryCacheEvictionReason? {
        if expiry <= now { return .expired }
        if countLimit == 0 { return .count }
        if cost > costLimit { return .cost }
        if ageLimit <= 0 { return .age }
        return nil
    }

    /// Removes the entry for `key`; returns its value and whether it was still live at `now`.
    @inlinable
    mutating func removeValue(forKey key: Key, now reading: Int64) -> (value: Value, isLive: Bool)? {
        guard let index = list.find(key) else { return nil }
        let isLive = deadReason(index, now: monotonic(reading)) == nil
        return (list.remove(index).value, isLive)
    }

    /// Empties the cache and returns the old storage, to be destroyed after the lock is released.
    mutating func removeAll() -> List {
        defer { list = List() }
        return list
    }

    /// The keys in eviction order: the next one eviction considers first.
    var keysInEvictionOrder: [Key] {
        list.indicesInQueueOrder.map { list.key(at: $0) }
    }

    /// A description of the first broken invariant, or `nil`. O(n); for tests.
    func invariantViolation() -> String? {
        if let violation = list.invariantViolation() { return violation }
        if list.indicesInQueueOrder.contains(where: { list.lastAccess(at: $0) > latestTime }) {
            return "an entry was used after the latest clock reading"
        }
        return nil
    }
}
