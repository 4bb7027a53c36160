import Synchronization

/// A flag the store raises when it notices another process's change, read without the store's
/// lock after every call so that observers hear of it without slowing the steady state.
final class ChangeSignal: Sendable {
    /// Whether changes are waiting to be reported. Raised and lowered under the store's lock,
    /// sequentially consistent so that a delivery finishing never misses one raised meanwhile.
    let pending = Atomic<Bool>(false)
    /// Whether anyone subscribes to the changes: only then does a catch-up collect the changed keys.
    let isObserved = Atomic<Bool>(false)
}
