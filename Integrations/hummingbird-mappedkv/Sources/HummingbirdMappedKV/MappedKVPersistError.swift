// The errors the persist driver adds to Hummingbird's `PersistError` and the store's
// `MappedKVError`: what a counter or a namespace can get wrong.
//
// Invariant: each case names the key or namespace it is about, and its description says what to
// do, so a log line alone is enough to act on.

/// An error of ``MappedKVPersistDriver`` that neither `PersistError` nor ``MappedKVError`` covers.
public enum MappedKVPersistError: Error, Equatable, Sendable, CustomStringConvertible {
    /// ``MappedKVPersistDriver/increment(key:by:expires:)`` found a live value under `key` that is
    /// not a counter (JSON of an integer): nothing was changed.
    case notACounter(key: String)
    /// ``MappedKVPersistDriver/increment(key:by:expires:)`` would take the counter under `key`
    /// from `value` past `Int`'s range by `delta`: nothing was changed.
    case counterOutOfRange(key: String, value: Int, delta: Int)
    /// The configuration's namespace cannot be kept apart from others; `reason` says why.
    case invalidNamespace(String, reason: String)

    public var description: String {
        switch self {
        case .notACounter(let key):
            return "the key '\(key)' holds a value that is not a counter; remove it or use another key"
        case .counterOutOfRange(let key, let value, let delta):
            return "the counter '\(key)' at \(value) cannot change by \(delta) within Int's range"
        case .invalidNamespace(let namespace, let reason):
            return "the namespace '\(namespace)' is not valid: \(reason)"
        }
    }
}
