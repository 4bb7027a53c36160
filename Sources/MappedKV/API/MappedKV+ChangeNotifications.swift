import Synchronization

// Subscribing to other processes' changes.
//
// The invariant: a subscription lasts from the call that makes it until it is cancelled, its
// observation is released, its stream's consumer stops (task cancelled or stream dropped), or the
// handle it was made through is closed, and it keeps that handle open meanwhile. While a
// multi-process store has at least one subscription, a watcher thread (Sharing/ChangeWatcher.swift)
// pushes other processes' changes within about 10 ms; with none, no thread or timer exists.
extension MappedKV {
    /// Calls `handler` with every change another process makes to the store, until the returned
    /// observation is cancelled or released, or this handle is closed.
    ///
    /// In multi-process mode a watcher looks at the store every 10 ms while anyone subscribes,
    /// so `handler` hears of a change within about 10 ms even if this process never touches the
    /// store; a read, a write or ``checkForChanges()`` that notices a change first reports it
    /// before returning (unless another thread is delivering changes at that moment: that thread
    /// then delivers it). This process's own writes (through any handle) are never reported.
    /// Handlers run outside the store's lock, one change at a time in the order noticed, on the
    /// watcher's thread or on the thread that noticed the change; they may call the store.
    ///
    /// In single-process mode no other process can write the store (the mode lock keeps them
    /// out), so the handler is never called and no watcher runs.
    ///
    /// The observation keeps this handle open. Keep it as long as you want the calls:
    ///
    /// ```swift
    /// let observation = store.observeExternalChanges { change in
    ///     print("changed elsewhere:", change.changedKeys ?? ["(everything)"])
    /// }
    /// defer { observation.cancel() }
    /// ```
    public func observeExternalChanges(
        _ handler: @escaping @Sendable (ExternalChange) -> Void
    ) -> ExternalChangeObservation {
        subscribe(handler, end: nil)
    }

    /// ``observeExternalChanges(_:)`` with a call when the subscription ends (cancelled, released,
    /// or this handle closed), made once, outside every lock: for layers that end their own
    /// streams with the store's.
    package func observeExternalChanges(
        _ handler: @escaping @Sendable (ExternalChange) -> Void, end: @escaping @Sendable () -> Void
    ) -> ExternalChangeObservation {
        subscribe(handler, end: end)
    }

    /// The changes other processes make to the store, as an asynchronous sequence, pushed as
    /// ``observeExternalChanges(_:)`` describes.
    ///
    /// The sequence ends when the consuming task is cancelled, when it is dropped, or when this
    /// handle is closed (then the loop below finishes). Up to 1,024 unconsumed changes are
    /// buffered; older ones are dropped. In single-process mode it yields nothing.
    ///
    /// ```swift
    /// for await change in store.externalChanges() {
    ///     if change.mayHaveChanged("region") { print("region:", try store.string(forKey: "region") ?? "-") }
    /// }
    /// ```
    public func externalChanges() -> AsyncStream<ExternalChange> {
        let (stream, continuation) = AsyncStream.makeStream(
            of: ExternalChange.self, bufferingPolicy: .bufferingNewest(1024))
        let observation = subscribe({ change in continuation.yield(change) }, end: { continuation.finish() })
        continuation.onTermination = { _ in observation.cancel() }
        return stream
    }

    /// The change watcher threads running in this process (one per store with subscribers; a
    /// stopped one counts until its thread exits, within 10 ms). For tests.
    package static var runningChangeWatchers: Int { ChangeWatcher.running.load(ordering: .relaxed) }

    /// The change watcher threads of this handle's store that are running (a stopped one counts
    /// until its thread exits). For tests, which other tests' watchers in the process do not disturb.
    package var changeWatcherThreads: Int { shared.watcherThreads.load(ordering: .relaxed) }

    private func subscribe(
        _ deliver: @escaping @Sendable (ExternalChange) -> Void, end: (@Sendable () -> Void)?
    ) -> ExternalChangeObservation {
        let store = shared
        let token = store.subscribe(owner: ObjectIdentifier(self), deliver: deliver, end: end)
        let observation = ExternalChangeObservation { [self] in
            _ = self  // the handle stays open until the subscription ends
            store.unsubscribe(token)
        }
        // A close that ended this handle's subscriptions before this one was added.
        if (try? ensureOpen()) == nil { observation.cancel() }
        return observation
    }

    /// Ends this handle's subscriptions; called when it closes.
    func endChangeSubscriptions() {
        shared.endSubscriptions(ownedBy: ObjectIdentifier(self))
    }
}
