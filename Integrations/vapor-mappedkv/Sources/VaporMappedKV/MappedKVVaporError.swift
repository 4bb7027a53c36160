// The errors the Vapor cache, counters and sessions driver report, beyond the core cache's own `CacheError`.
// Invariant: a stored value that does not decode as the asked type, or a value that does not encode,
// is reported as one of these and never crashes the app or changes what is stored.

import MappedKVCache

/// An error from the MappedKV cache or sessions driver for Vapor.
///
/// Errors of the directory itself (an unusable key, a value too large, a closed cache) arrive as the
/// core's `CacheError`, unchanged.
public enum MappedKVVaporError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The value stored under `key` is not JSON of the type the caller asked for; nothing was changed.
    case valueDoesNotDecode(key: String, type: String, reason: String)
    /// The value given for `key` could not be encoded as JSON; nothing was stored.
    case valueDoesNotEncode(key: String, type: String, reason: String)
    /// The cache directory could not be opened when the app configured it.
    case directoryUnavailable(directory: String, reason: String)
    /// The value under `key` is not a counter (the decimal digits of an integer), so it cannot be
    /// incremented; nothing was changed.
    case notACounter(key: String)
    /// Incrementing the counter under `key` would take it past the range of `Int`; nothing was
    /// changed.
    case counterOverflow(key: String)
    /// A counter under `key` was asked to expire after zero seconds or less, so it could never be
    /// read; nothing was changed.
    case counterExpiryNotPositive(key: String)

    /// A sentence saying what went wrong.
    public var description: String {
        switch self {
        case .valueDoesNotDecode(let key, let type, let reason):
            return "the value stored under \"\(key)\" does not decode as \(type): \(reason)"
        case .valueDoesNotEncode(let key, let type, let reason):
            return "a value of type \(type) for \"\(key)\" does not encode as JSON: \(reason)"
        case .directoryUnavailable(let directory, let reason):
            return "the MappedKV directory \(directory) could not be opened: \(reason)"
        case .notACounter(let key):
            return "the value stored under \"\(key)\" is not a counter, so it cannot be incremented"
        case .counterOverflow(let key):
            return "incrementing the counter under \"\(key)\" would take it past the range of Int"
        case .counterExpiryNotPositive(let key):
            return "the counter under \"\(key)\" would expire at once: give it a lifetime of at least one second"
        }
    }
}
