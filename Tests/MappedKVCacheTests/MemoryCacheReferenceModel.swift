// A deliberately simple model of `MemoryCache`'s documented behaviour, for the model-based test.
//
// Invariant: `entries` is in queue order (the next eviction candidate first), each with its
// second-chance mark and the number of its last store or read, and every rule is written as a plain
// scan of it, independent of the cache's index, list and free-slot bookkeeping.

@testable import MappedKVCache

/// `MemoryCache<Int, Int>` as the documentation describes it, in O(n) per operation.
struct MemoryCacheReferenceModel {
    struct Entry: Equatable {
        var key: Int
        var value: Int
        var cost: Int
        /// When stored or last read, in nanoseconds.
        var lastAccess: Int64
        /// When it expires, in nanoseconds; `nil` for never.
        var expiry: Int64?
        /// Whether it was read since it was last queued.
        var referenced = false
        /// The number of its last store or read, counting every store and read.
        var sequence: Int
    }

    typealias Record = MemoryCacheEvictionRecord<Int, Int>

    /// In queue order: the first is the next one eviction considers.
    private(set) var entries: [Entry] = []
    /// The number of stores and reads so far.
    private var accesses = 0
    private(set) var limits = MemoryCacheLimits()
    var fraction: Double
    /// The time in nanoseconds.
    private(set) var now: Int64 = 0
    private(set) var statistics = MemoryCacheStatistics()
    /// Evictions not yet compared.
    var log: [Record] = []
    /// How many times an entry was queued again for having been read.
    private(set) var secondChances = 0

    init(limits: MemoryCacheLimits, fraction: Double) {
        self.limits = limits
        self.fraction = fraction
    }

    var count: Int { entries.count }
    /// The keys of the entries neither expired nor aged out, least recently stored or read first.
    var liveKeysLeastRecentFirst: [Int] {
        entries.filter { deadReason($0) == nil }.sorted { $0.sequence < $1.sequence }.map(\.key)
    }
    var totalCost: Int { entries.reduce(0) { $0 + $1.cost } }

    private var ageLimit: Int64? { limits.age.map(Self.nanoseconds) }

    static func nanoseconds(_ duration: Duration) -> Int64 {
        duration.components.seconds * 1_000_000_000 + duration.components.attoseconds / 1_000_000_000
    }

    mutating func advance(by nanoseconds: Int64) {
        now += nanoseconds
    }

    private func deadReason(_ entry: Entry) -> MemoryCacheEvictionReason? {
        if let expiry = entry.expiry, now >= expiry { return .expired }
        if let ageLimit, now - entry.lastAccess >= ageLimit { return .age }
        return nil
    }

    private mutating func evict(at position: Int, _ reason: MemoryCacheEvictionReason) {
        let entry = entries.remove(at: position)
        statistics.evictions += 1
        log.append(Record(key: entry.key, value: entry.value, reason: reason))
    }

    mutating func get(_ key: Int) -> Int? {
        guard let position = entries.firstIndex(where: { $0.key == key }) else {
            statistics.misses += 1
            return nil
        }
        if let reason = deadReason(entries[position]) {
            evict(at: position, reason)
            statistics.misses += 1
            return nil
        }
        statistics.hits += 1
        entries[position].lastAccess = now
        entries[position].referenced = true
        entries[position].sequence = accesses
        accesses += 1
        return entries[position].value
    }

    func contains(_ key: Int) -> Bool {
        guard let entry = entries.first(where: { $0.key == key }) else { return false }
        return deadReason(entry) == nil
    }

    mutating func set(_ value: Int, forKey key: Int, cost: Int, timeToLive: Int64?) {
        let expiry = timeToLive.map { now + $0 }
        let rejection: MemoryCacheEvictionReason? =
            if let expiry, now >= expiry {
                .expired
            } else if limits.count == 0 {
                .count
            } else if let costLimit = limits.totalCost, cost > costLimit {
                .cost
            } else if ageLimit == 0 {
                .age
            } else {
                nil
            }
        entries.removeAll { $0.key == key }
        if let rejection {
            statistics.evictions += 1
            log.append(Record(key: key, value: value, reason: rejection))
        } else {
            entries.append(
                Entry(key: key, value: value, cost: cost, lastAccess: now, expiry: expiry, sequence: accesses))
        }
        accesses += 1
        trimToLimits()
    }

    mutating func remove(_ key: Int) -> Int? {
        guard let position = entries.firstIndex(where: { $0.key == key }) else { return nil }
        let entry = entries.remove(at: position)
        return deadReason(entry) == nil ? entry.value : nil
    }

    mutating func removeAll() {
        entries.removeAll()
    }

    mutating func setLimits(_ newLimits: MemoryCacheLimits) {
        limits = newLimits
        trimToLimits()
    }

    private mutating func trimToLimits() {
        if let ageLimit { trimFront(toAge: ageLimit) }
        if let countLimit = limits.count { trim(toCount: countLimit) }
        if let costLimit = limits.totalCost { trim(toCost: costLimit) }
    }

    /// Queues the first entry again, unmarked, while it is marked; then evicts it.
    private mutating func evictNext(_ reason: MemoryCacheEvictionReason) {
        while entries[0].referenced {
            var entry = entries.removeFirst()
            entry.referenced = false
            entries.append(entry)
            secondChances += 1
        }
        evict(at: 0, reason)
    }

    mutating func trim(toCount limit: Int, _ reason: MemoryCacheEvictionReason = .count) {
        while entries.count > limit { evictNext(reason) }
    }

    mutating func trim(toCost limit: Int, _ reason: MemoryCacheEvictionReason = .cost) {
        while totalCost > limit { evictNext(reason) }
    }

    /// What a store does for the age limit: from the front of the queue, evicts entries past `age`
    /// and queues marked ones again, until the first that is neither.
    private mutating func trimFront(toAge age: Int64) {
        while let first = entries.first {
            if now - first.lastAccess >= age {
                evict(at: 0, .age)
            } else if first.referenced {
                var entry = entries.removeFirst()
                entry.referenced = false
                entries.append(entry)
                secondChances += 1
            } else {
                return
            }
        }
    }

    /// Evicts every entry past `age`, in queue order.
    mutating func trim(toAge age: Int64) {
        var position = 0
        while position < entries.count {
            if now - entries[position].lastAccess >= age {
                evict(at: position, .age)
            } else {
                position += 1
            }
        }
    }

    mutating func removeExpired() {
        var position = 0
        while position < entries.count {
            if let expiry = entries[position].expiry, now >= expiry {
                evict(at: position, .expired)
            } else {
                position += 1
            }
        }
    }

    mutating func sweep() {
        removeExpired()
        if let ageLimit { trim(toAge: ageLimit) }
    }

    mutating func handleMemoryPressure() {
        let countTarget = Int((Double(count) * fraction).rounded(.down))
        let costTarget = Int((Double(totalCost) * fraction).rounded(.down))
        removeExpired()
        while entries.count > countTarget || totalCost > costTarget { evictNext(.memoryPressure) }
    }

    mutating func resetStatistics() {
        statistics = MemoryCacheStatistics()
    }

    /// Whether the count and cost limits hold now. (A store keeps the age limit only at the front of
    /// the queue, which `trimFront(toAge:)` models; a sweep keeps it everywhere: see `holdsNothingOlder`.)
    var limitsHold: Bool {
        if let countLimit = limits.count, count > countLimit { return false }
        if let costLimit = limits.totalCost, totalCost > costLimit { return false }
        return true
    }

    /// Whether no entry has gone unread for `age` (the age limit if `nil`, or none) or longer.
    func holdsNothingOlder(than age: Int64? = nil) -> Bool {
        guard let age = age ?? ageLimit else { return true }
        return !entries.contains { now - $0.lastAccess >= age }
    }
}
