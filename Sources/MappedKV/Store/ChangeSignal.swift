import Synchronization

/// The flags of a store's change delivery: the one the store raises when it notices another
/// process's change, read without the store's lock after every call so that observers hear of it
/// without slowing the steady state, and the one a delivering thread holds.
///
/// `pending` and `delivering` are read by ``MappedKV/synchronizeChangesIfMoved()``'s check, which
/// is inlined into other modules.
@usableFromInline
final class ChangeSignal: Sendable {
    /// Whether changes are waiting to be reported. Raised and lowered under the store's lock,
    /// sequentially consistent so that a delivery finishing never misses one raised meanwhile.
    @usableFromInline let pending = Atomic<Bool>(false)
    /// Raised while one thread hands out changes, so that they go out in order, one at a time.
    @usableFromInline let delivering = Atomic<Bool>(false)
    /// Whether anyone subscribes to the changes: only then does a catch-up collect the changed keys.
    let isObserved = Atomic<Bool>(false)
}
