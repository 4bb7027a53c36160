import Synchronization

/// A flag the store raises when it notices another process's change, read without the store's
/// lock after every call so that observers hear of it without slowing the steady state.
final class ChangeSignal: Sendable {
    /// Whether changes are waiting to be reported.
    let pending = Atomic<Bool>(false)
}
