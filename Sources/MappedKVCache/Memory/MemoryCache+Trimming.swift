// Trimming `MemoryCache` by hand, under memory pressure and on a timer.
//
// Invariant: the automatic trimming task never holds a strong reference to the cache while it
// sleeps, so the cache's lifetime is its owners' alone, and the cache cancels the task when it goes.

extension MemoryCache {
    /// Evicts entries in eviction order (see ``MemoryCache``) until at most `count` remain, reporting
    /// them as ``MemoryCacheEvictionReason/count``.
    ///
    /// - Parameter count: The number of entries to keep at most; not negative.
    public func trim(toCount count: Int) {
        precondition(count >= 0, "MemoryCache: cannot trim to a negative count")
        withState { state, batch in state.trim(toCount: count, reason: .count, batch: &batch) }
    }

    /// Evicts entries in eviction order (see ``MemoryCache``) until their summed cost is at most
    /// `cost`, reporting them as ``MemoryCacheEvictionReason/cost``.
    ///
    /// - Parameter cost: The total cost to keep at most; not negative.
    public func trim(toCost cost: Int) {
        precondition(cost >= 0, "MemoryCache: cannot trim to a negative cost")
        withState { state, batch in state.trim(toCost: cost, reason: .cost, batch: &batch) }
    }

    /// Evicts every entry that has gone unread for `age` or longer, reporting them as
    /// ``MemoryCacheEvictionReason/age``. `trim(toAge: .zero)` evicts everything.
    ///
    /// This walks every entry while holding the lock: reads do not reorder the eviction queue, so the
    /// entries unread the longest are not all at one end of it.
    ///
    /// - Parameter age: The time since an entry was stored or last read at which it goes; not negative.
    public func trim(toAge age: Duration) {
        precondition(age >= .zero, "MemoryCache: cannot trim to a negative age")
        let now = clock.nanoseconds
        withState { state, batch in
            state.removeAged(MemoryCacheClock.nanoseconds(age), now: state.monotonic(now), batch: &batch)
        }
    }

    /// Evicts every entry whose time to live has run out, reporting them as
    /// ``MemoryCacheEvictionReason/expired``, in eviction-queue order.
    ///
    /// This walks every entry while holding the lock when any entry has a time to live, and costs
    /// nothing when none has.
    public func removeExpiredValues() {
        let now = clock.nanoseconds
        withState { state, batch in state.removeExpired(now: state.monotonic(now), batch: &batch) }
    }

    /// What the automatic trimming task does on each tick: evicts expired entries, then the entries
    /// past the age limit.
    ///
    /// This walks every entry while holding the lock when any entry has a time to live or the cache has
    /// an age limit, and costs nothing otherwise.
    public func trimExpiredAndAged() {
        let now = clock.nanoseconds
        withState { state, batch in state.sweep(now: now, batch: &batch) }
    }

    /// Gives memory back: evicts every expired entry, then entries in eviction order (see
    /// ``MemoryCache``) until both the count and the total cost are at most ``memoryPressureFraction``
    /// of what they were when the call began, and then shrinks the cache's own storage if it has become
    /// mostly empty.
    ///
    /// Expired entries are reported as ``MemoryCacheEvictionReason/expired``, the others as
    /// ``MemoryCacheEvictionReason/memoryPressure``.
    ///
    /// Linux has no equivalent of the memory warnings of Apple platforms, so the cache never calls this
    /// by itself. Call it when your process learns of memory pressure, for example from its own
    /// monitoring of the cgroup's `memory.pressure` (pressure stall information) or `memory.events`
    /// files, or of its resident size.
    public func handleMemoryPressure() {
        let now = clock.nanoseconds
        withState { state, batch in state.handleMemoryPressure(now: now, batch: &batch) }
    }

    /// Starts the task that calls ``trimExpiredAndAged()`` every `interval`.
    ///
    /// The task sleeps on the system's continuous clock whatever ``MemoryCacheClock`` the cache reads,
    /// holds the cache only weakly and ends at its first wake-up after the cache is gone (at once, since
    /// `deinit` cancels it).
    func startTrimming(every interval: Duration) {
        let task = Task.detached(priority: .utility) { [weak self] in
            while true {
                do {
                    try await Task.sleep(for: interval)
                } catch {
                    return
                }
                guard let cache = self else { return }
                cache.trimExpiredAndAged()
            }
        }
        trimTask.withLock { $0 = task }
    }
}
