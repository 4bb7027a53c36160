// A thread-safe in-memory cache with second-chance (CLOCK) eviction.
//
// Invariant: all state sits behind one `Mutex`; no handler is called and no cached value is destroyed
// while it is held, so handlers and value deinitializers may call back into the cache.

import Synchronization

/// A thread-safe, in-memory key-value cache that evicts with the second-chance (CLOCK) policy, an
/// approximation of least-recently-used eviction.
///
/// Reads, stores and removals take O(1) time (eviction amortized O(1)): a hash index leads from each
/// key to a node of a doubly linked queue kept in arrays, without per-entry objects, so entries cost no
/// allocation of their own once the arrays have grown. Each entry carries a cost (given when it is
/// stored), the time it was stored or last read, and optionally a time to live.
///
/// Entries wait in a queue in the order they were stored. A read does not move its entry; it only
/// marks it as read, which keeps a hit about as cheap as a dictionary lookup (moving the entry would
/// touch its neighbours' memory too). Eviction looks at the entry queued longest ago: if it was read
/// since it was queued, it is queued again, unmarked (its second chance), and the next one is looked
/// at; otherwise it is evicted. An entry read since it was queued thus outlasts the unread entries
/// queued before it, as in least-recently-used eviction, but the order of the reads among themselves
/// does not decide which entry goes first (the CLOCK policy of operating systems' page caches).
/// ``entries(order:)`` still lists the entries in exact order of their last store or read.
///
/// The cache keeps its count and cost ``limits`` whenever a call returns: storing a value evicts
/// entries in that order until both hold. An entry whose time to live ran out, or that went unread for
/// the age limit, is a miss and is evicted when it is found. A store also evicts the entries past the
/// age limit at the eviction end of the queue, and each sweep (``trimExpiredAndAged()``) evicts every
/// one; an entry given its second chance can age out further along the queue, and counts in ``count``
/// until one of those finds it.
///
/// ```swift
/// let cache = MemoryCache<String, [UInt8]>(limits: .init(count: 1_000, totalCost: 64 << 20))
/// cache.set(bytes, forKey: "avatar", cost: bytes.count, timeToLive: .seconds(300))
/// let cached = cache.value(forKey: "avatar")
/// ```
///
/// Linux has no memory-warning notification: call ``handleMemoryPressure()`` yourself, for example when
/// your own monitoring of the cgroup's `memory.pressure` or `memory.events` reports pressure.
///
/// Every operation takes one lock (a read that finds an expired or aged-out entry takes it a second
/// time to evict it). ``onEviction`` is called after the lock is released, on the thread
/// whose call caused the eviction (or the automatic trimming task), so the handler may use the cache.
public final class MemoryCache<Key: Hashable & Sendable, Value: Sendable>: Sendable {
    /// The bounds the cache keeps.
    public typealias Limits = MemoryCacheLimits
    /// The cache's counters.
    public typealias Statistics = MemoryCacheStatistics
    /// Why an entry was evicted.
    public typealias EvictionReason = MemoryCacheEvictionReason
    /// A handler that hears each evicted entry with the reason it was evicted.
    public typealias EvictionHandler = @Sendable (Key, Value, EvictionReason) -> Void

    /// The state, behind the lock.
    @usableFromInline let lockedState: Mutex<MemoryCacheState<Key, Value>>
    /// The time source.
    @usableFromInline let clock: MemoryCacheClock
    /// The automatic trimming task, if any; set once, right after initialization.
    let trimTask = Mutex<Task<Void, Never>?>(nil)

    /// How often the cache sweeps out expired and aged-out entries by itself, or `nil` if it never does.
    public let trimInterval: Duration?

    /// Makes an empty cache.
    ///
    /// - Parameters:
    ///   - limits: The bounds to keep; none by default.
    ///   - trimInterval: How often a background task evicts expired entries and entries past the age
    ///     limit, or `nil` for never (they are then evicted only when they are read or trimmed). The task
    ///     holds only a weak reference to the cache and ends when the cache is deinitialized. Five
    ///     seconds by default.
    ///   - memoryPressureFraction: The share of the count and of the total cost that
    ///     ``handleMemoryPressure()`` keeps, from 0 to 1; half by default.
    ///   - clock: The time source; by default ``MemoryCacheClock/coarse``, the kernel's tick-granular
    ///     monotonic clock, which a cache reads on every operation for a third of the cost of
    ///     ``MemoryCacheClock/continuous``: times to live and the age limit are then honoured to within
    ///     a kernel tick (1 to 10 ms). Pass ``MemoryCacheClock/continuous`` for nanosecond resolution.
    ///   - onEviction: Hears every entry the cache evicts by itself; see ``onEviction``.
    public init(
        limits: Limits = .unlimited,
        trimInterval: Duration? = .seconds(5),
        memoryPressureFraction: Double = 0.5,
        clock: MemoryCacheClock = .coarse,
        onEviction: EvictionHandler? = nil
    ) {
        precondition(
            (0...1).contains(memoryPressureFraction), "MemoryCache: memoryPressureFraction must be from 0 to 1")
        precondition(trimInterval.map { $0 > .zero } ?? true, "MemoryCache: trimInterval must be positive")
        lockedState = Mutex(
            MemoryCacheState(limits: limits, memoryPressureFraction: memoryPressureFraction, onEviction: onEviction))
        self.clock = clock
        self.trimInterval = trimInterval
        if let trimInterval {
            startTrimming(every: trimInterval)
        }
    }

    deinit {
        trimTask.withLock { $0?.cancel() }
    }

    /// Runs `body` on the locked state, then reports the evictions it recorded once the lock is
    /// released; the evicted and released values are destroyed after that.
    @inlinable
    func withState<Result: Sendable>(
        _ body: (inout MemoryCacheState<Key, Value>, inout EvictionBatch<Key, Value>) -> Result
    ) -> Result {
        let (result, batch) = lockedState.withLock { state in
            var batch = EvictionBatch<Key, Value>()
            let result = body(&state, &batch)
            if !batch.isEmpty {
                batch.handler = state.onEviction
            }
            return (result, batch)
        }
        batch.deliver()
        return result
    }

    // MARK: - Reading

    /// The value stored for `key`, or `nil` if there is none.
    ///
    /// A hit marks the entry as read, which earns it a second chance when eviction reaches it, and
    /// counts as a hit. An entry whose time to
    /// live ran out, or that went unread for the age limit, is a miss: it is evicted (reported as
    /// ``MemoryCacheEvictionReason/expired`` or ``MemoryCacheEvictionReason/age``) and `nil` is
    /// returned.
    ///
    /// - Parameter key: The key to look up.
    /// - Returns: The live value stored for `key`, or `nil`.
    @inlinable
    public func value(forKey key: Key) -> Value? {
        let now = clock.nanoseconds
        // Hits and misses take the lock without an eviction batch, whose making, copying out and
        // destroying would weigh on every hit (the cache bench's memory_get). A dead entry takes
        // the lock again with one; the lookup then happens there, as if it had been the only one.
        switch lockedState.withLock({ $0.liveValue(forKey: key, now: now) }) {
        case .hit(let value): return value
        case .absent: return nil
        case .dead: return withState { state, batch in state.value(forKey: key, now: now, batch: &batch) }
        }
    }

    /// Whether the cache holds a live value for `key`.
    ///
    /// Unlike ``value(forKey:)``, this neither marks the entry as read nor changes the statistics,
    /// and an entry that has expired is left for a later read or sweep to evict.
    ///
    /// - Parameter key: The key to look up.
    /// - Returns: `true` if a value is stored for `key` and has neither expired nor aged out.
    @inlinable
    public func contains(_ key: Key) -> Bool {
        let now = clock.nanoseconds
        return lockedState.withLock { $0.contains(key, now: now) }
    }

    /// The number of entries, counting those that have expired but have not been evicted yet.
    @inlinable
    public var count: Int {
        lockedState.withLock { $0.list.count }
    }

    /// Whether the cache holds no entry.
    @inlinable
    public var isEmpty: Bool {
        lockedState.withLock { $0.list.isEmpty }
    }

    /// The summed cost of the entries, counting those that have expired but have not been evicted yet.
    @inlinable
    public var totalCost: Int {
        lockedState.withLock { $0.list.totalCost }
    }

    // MARK: - Writing

    /// Stores `value` for `key`, replacing any value stored for it, at the back of the eviction queue
    /// and unmarked, then evicts entries until the limits hold (see ``MemoryCache`` for the order).
    ///
    /// Entries past the age limit at the eviction end of the queue go first
    /// (``MemoryCacheEvictionReason/age``), then entries over the count limit
    /// (``MemoryCacheEvictionReason/count``), then entries over the cost limit
    /// (``MemoryCacheEvictionReason/cost``). The new entry itself is never evicted to make room; but a
    /// value that could not be kept even alone is not stored: any entry for `key` is removed and the new
    /// value is reported as evicted at once (then entries past the age limit are evicted), as
    /// ``MemoryCacheEvictionReason/expired`` if `timeToLive` is not positive,
    /// ``MemoryCacheEvictionReason/count`` if the count limit is zero,
    /// ``MemoryCacheEvictionReason/cost`` if `cost` exceeds the cost limit, or
    /// ``MemoryCacheEvictionReason/age`` if the age limit is zero.
    ///
    /// - Parameters:
    ///   - value: The value to store.
    ///   - key: The key to store it for.
    ///   - cost: What the entry counts against the total-cost limit, such as its size in bytes; not
    ///     negative. 0 by default.
    ///   - timeToLive: How long after this call the entry expires, whether or not it is read; `nil` (the
    ///     default) for never. Storing a value again sets a new time to live.
    @inlinable
    public func set(_ value: Value, forKey key: Key, cost: Int = 0, timeToLive: Duration? = nil) {
        let now = clock.nanoseconds
        withState { state, batch in
            state.set(value, forKey: key, cost: cost, timeToLive: timeToLive, now: now, batch: &batch)
        }
    }

    /// Removes the entry for `key`.
    ///
    /// An explicit removal is not an eviction: ``onEviction`` does not hear of it.
    ///
    /// - Parameter key: The key to remove.
    /// - Returns: The value that was stored for `key`, or `nil` if there was none or it had expired or
    ///   aged out.
    @inlinable
    @discardableResult
    public func removeValue(forKey key: Key) -> Value? {
        let now = clock.nanoseconds
        let removed = withState { state, _ in state.removeValue(forKey: key, now: now) }
        guard let removed, removed.isLive else { return nil }
        return removed.value
    }

    /// Removes every entry. The statistics are kept.
    ///
    /// An explicit removal is not an eviction: ``onEviction`` does not hear of it. The values are
    /// destroyed after the lock is released.
    public func removeAll() {
        // The old storage comes out of the lock and is destroyed here, with the lock released.
        _ = lockedState.withLock { $0.removeAll() }
    }

    // MARK: - Configuration

    /// The bounds the cache keeps.
    ///
    /// Setting new limits evicts entries until they hold, before the setter returns, in the same way as
    /// ``set(_:forKey:cost:timeToLive:)``: by age at the eviction end of the queue, then count, then cost.
    public var limits: Limits {
        get { lockedState.withLock { $0.limits } }
        set {
            let now = clock.nanoseconds
            withState { state, batch in
                state.setLimits(newValue)
                state.trimToLimits(now: state.monotonic(now), batch: &batch)
            }
        }
    }

    /// The share of the count and of the total cost that ``handleMemoryPressure()`` keeps, from 0 to 1.
    public var memoryPressureFraction: Double {
        get { lockedState.withLock { $0.memoryPressureFraction } }
        set {
            precondition((0...1).contains(newValue), "MemoryCache: memoryPressureFraction must be from 0 to 1")
            lockedState.withLock { $0.memoryPressureFraction = newValue }
        }
    }

    /// Hears every entry the cache evicts by itself, with the reason (see ``MemoryCacheEvictionReason``).
    ///
    /// The handler runs after the cache's lock is released, on the thread whose call caused the eviction
    /// (or on the automatic trimming task), once per entry in the order the entries were evicted. It
    /// may call back into the cache. Handlers of concurrent calls may run concurrently. Capture the
    /// cache weakly in the handler, or it keeps the cache alive. Explicit removals, ``removeAll()`` and
    /// replaced values are not reported.
    public var onEviction: EvictionHandler? {
        get { lockedState.withLock { $0.onEviction } }
        set { lockedState.withLock { $0.onEviction = newValue } }
    }

    // MARK: - Statistics

    /// The hit, miss and eviction counters since the cache was made or ``resetStatistics()`` was called.
    public var statistics: Statistics {
        lockedState.withLock { $0.statistics }
    }

    /// Sets the hit, miss and eviction counters back to zero.
    public func resetStatistics() {
        lockedState.withLock { $0.statistics = Statistics() }
    }
}
