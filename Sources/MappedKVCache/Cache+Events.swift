// Observing a `Cache`: callbacks and an asynchronous sequence of `CacheEvent`s.
//
// Invariant: an observation lasts from the call that makes it until it is cancelled or released
// (or, for the sequence, until its consumer stops); while nobody observes, no event is built.

extension Cache {
    /// Calls `handler` with every ``CacheEvent`` of this cache until the returned observation is
    /// cancelled or released.
    ///
    /// Events of calls on this cache are told on the calling thread: `willAdd`, `willRemove` and
    /// `willRemoveAll` before the change, `didAdd`, `didRemove` and `didRemoveAll` after it, and
    /// the memory side's evictions and expiries (``CacheEvent/Tier/memory``) as they happen.
    /// Changes noticed from other processes (``CacheEvent/Origin/otherProcess``: their sets,
    /// removals and trims of the disk side, told as `didAdd` or `didRemove`, and their
    /// `removeAll`) are told on a queue of the cache's own, in the order noticed. No lock of the
    /// cache is held while `handler` runs, so it may call the cache.
    ///
    /// ```swift
    /// let observation = cache.observeEvents { event in
    ///     if event.kind == .didEvict { print("evicted", event.key ?? "-") }
    /// }
    /// defer { observation.cancel() }
    /// ```
    public func observeEvents(_ handler: @escaping @Sendable (CacheEvent) -> Void) -> CacheEventObservation {
        let observers = self.observers
        let token = observers.add(handler)
        return CacheEventObservation { observers.remove(token) }
    }

    /// The events ``observeEvents(_:)`` hears, as an asynchronous sequence that ends when its
    /// consumer stops. Up to 1,024 unconsumed events are buffered; older ones are dropped.
    public func events() -> AsyncStream<CacheEvent> {
        let (stream, continuation) = AsyncStream.makeStream(
            of: CacheEvent.self, bufferingPolicy: .bufferingNewest(1024))
        let observation = observeEvents { event in continuation.yield(event) }
        continuation.onTermination = { _ in observation.cancel() }
        return stream
    }
}
