import Synchronization

/// The subscribers to one store's external changes, in subscription order.
///
/// The invariant: a subscriber is in the list from its subscription until it ends (cancelled,
/// released, or its handle closed), and once it has ended it is never called again except for a
/// call already in progress; ``Subscriber/end`` runs once, outside every lock.
struct ChangeSubscribers: Sendable {
    /// One subscription.
    struct Subscriber: Sendable {
        /// The handle it was made through; closing that handle ends it.
        let owner: ObjectIdentifier
        /// Called with each change, outside the store's lock.
        let deliver: @Sendable (ExternalChange) -> Void
        /// Called once when the subscription ends (an `AsyncStream` finishes its continuation).
        let end: (@Sendable () -> Void)?
        /// Lowered when it ends, so a delivery already under way skips it.
        let isActive: ActiveFlag
    }

    /// Whether a subscriber is still active, shared between the list and a delivery in progress.
    final class ActiveFlag: Sendable {
        private let value = Atomic<Bool>(true)
        var isActive: Bool { value.load(ordering: .acquiring) }
        func lower() { value.store(false, ordering: .releasing) }
    }

    private var next: UInt64 = 0
    private var byToken: [UInt64: Subscriber] = [:]

    /// Whether nobody subscribes.
    var isEmpty: Bool { byToken.isEmpty }

    /// The subscribers in the order they subscribed.
    var inOrder: [Subscriber] { byToken.sorted { $0.key < $1.key }.map(\.value) }

    /// Adds a subscriber; returns its token.
    mutating func add(_ subscriber: Subscriber) -> UInt64 {
        next += 1
        byToken[next] = subscriber
        return next
    }

    /// Removes the subscriber with `token`, lowering its flag; nil if it had already ended.
    mutating func remove(_ token: UInt64) -> Subscriber? {
        guard let subscriber = byToken.removeValue(forKey: token) else { return nil }
        subscriber.isActive.lower()
        return subscriber
    }

    /// Removes every subscriber made through `owner`, lowering their flags.
    mutating func removeAll(ownedBy owner: ObjectIdentifier) -> [Subscriber] {
        let tokens = byToken.filter { $0.value.owner == owner }.keys.sorted()
        return tokens.compactMap { remove($0) }
    }
}
