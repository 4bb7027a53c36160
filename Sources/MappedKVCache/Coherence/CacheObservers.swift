import Dispatch
import MappedKV
import Synchronization

// Who listens to a `Cache`'s events.
//
// Invariant: no handler runs while a lock of the cache, its memory tier or its manifest is held.
// Events of a caller's own call are told on its thread; the others (other processes' changes,
// which are noticed while the manifest delivers its changes, and background trims) go through one
// serial queue, so a handler may call the cache without waiting for the thread that noticed them.

/// The observers of one cache and the queue for events told later.
final class CacheObservers: Sendable {
    typealias Handler = @Sendable (CacheEvent) -> Void

    private struct Registry: Sendable {
        var nextToken: UInt64 = 0
        var handlers: [(token: UInt64, call: Handler)] = []
    }

    private let registry = Mutex(Registry())
    /// Whether anyone observes: the calls skip building events when nobody does.
    private let observed = Atomic<Bool>(false)
    private let queue = DispatchQueue(label: "MappedKVCache.Cache.events")

    /// Whether any handler is registered.
    var isObserved: Bool { observed.load(ordering: .relaxed) }

    /// Registers `handler`; returns the token that removes it.
    func add(_ handler: @escaping Handler) -> UInt64 {
        registry.withLock { registry in
            registry.nextToken += 1
            registry.handlers.append((registry.nextToken, handler))
            observed.store(true, ordering: .relaxed)
            return registry.nextToken
        }
    }

    /// Removes the handler with `token`.
    func remove(_ token: UInt64) {
        registry.withLock { registry in
            registry.handlers.removeAll { $0.token == token }
            observed.store(!registry.handlers.isEmpty, ordering: .relaxed)
        }
    }

    /// Tells every handler `event` now, on this thread.
    func tell(_ event: CacheEvent) {
        guard isObserved else { return }
        let handlers = registry.withLock { $0.handlers.map(\.call) }
        for handler in handlers { handler(event) }
    }

    /// Tells every handler `events`, in order, on the observers' queue.
    func tellLater(_ events: [CacheEvent]) {
        guard isObserved, !events.isEmpty else { return }
        queue.async { [self] in
            for event in events { tell(event) }
        }
    }
}

/// A registration made by ``Cache/observeEvents(_:)``: the calls stop when it is cancelled or
/// released. A call already under way may still finish; none starts afterwards.
public typealias CacheEventObservation = CancellationToken
