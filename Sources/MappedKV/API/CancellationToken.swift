import Synchronization

/// A registration of calls, such as ``MappedKV/observeExternalChanges(_:)``'s or a cache's event
/// handler's: the calls stop when it is cancelled or released. A call already under way may still
/// finish; none starts afterwards.
public final class CancellationToken: Sendable {
    private let cancellation: Mutex<(@Sendable () -> Void)?>

    /// A token whose cancellation, or release, calls `cancel` once.
    package init(_ cancel: @escaping @Sendable () -> Void) { cancellation = Mutex(cancel) }

    /// Stops the calls; cancelling twice is harmless.
    public func cancel() {
        let cancel = cancellation.withLock { value -> (@Sendable () -> Void)? in
            defer { value = nil }
            return value
        }
        cancel?()
    }

    deinit { cancel() }
}

/// A subscription made by ``MappedKV/observeExternalChanges(_:)``: the calls stop when it is
/// cancelled or released, or when the handle it was made through is closed. It keeps that handle
/// open until then.
public typealias ExternalChangeObservation = CancellationToken
