import Synchronization

extension MappedKV {
    /// Whether the store was opened to be shared with other processes.
    public var isMultiProcess: Bool { configuration.isMultiProcess }

    /// Looks for changes by other processes now (MMKV's `checkContentChanged()`), catching up
    /// with them and reporting them to observers; true if there was one. Reads and writes do
    /// this check themselves; call this to hear of changes without reading.
    @discardableResult
    public func checkForChanges() throws(MappedKVError) -> Bool {
        try ensureOpen()
        defer { reportChanges() }
        return try shared.core.withLock { (core) throws(MappedKVError) -> Bool in try core.checkForChanges() }
    }

    /// Calls `handler` for every change by another process this process notices (on a read, a
    /// write or ``checkForChanges()``), until the returned observation is cancelled. The handler
    /// runs on the thread that noticed the change, outside the store's lock.
    public func observeExternalChanges(
        _ handler: @escaping @Sendable (ExternalChange) -> Void
    ) -> ExternalChangeObservation {
        let store = shared
        let token = store.observers.withLock { $0.add(handler) }
        return ExternalChangeObservation { store.observers.withLock { $0.remove(token) } }
    }

    /// The changes by other processes this process notices, as an asynchronous sequence that
    /// ends when the consuming task is cancelled. Up to 1,024 unconsumed changes are buffered.
    public func externalChanges() -> AsyncStream<ExternalChange> {
        let (stream, continuation) = AsyncStream.makeStream(
            of: ExternalChange.self, bufferingPolicy: .bufferingNewest(1024))
        let observation = observeExternalChanges { change in continuation.yield(change) }
        continuation.onTermination = { _ in observation.cancel() }
        return stream
    }
}

/// A registration made by ``MappedKV/observeExternalChanges(_:)``; cancel it to stop the calls.
public final class ExternalChangeObservation: Sendable {
    private let cancellation: Mutex<(@Sendable () -> Void)?>

    init(_ cancel: @escaping @Sendable () -> Void) { cancellation = Mutex(cancel) }

    /// Stops the calls; cancelling twice is harmless.
    public func cancel() {
        let cancel = cancellation.withLock { value -> (@Sendable () -> Void)? in
            defer { value = nil }
            return value
        }
        cancel?()
    }

    deinit {}
}
