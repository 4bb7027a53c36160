import Foundation

// Foundation's view of the store's errors: `localizedDescription` is the same actionable text as
// `description`, not Foundation's generic "The operation couldn't be completed".

extension MappedKVError: LocalizedError {
    /// The error's ``description``: what happened, to which store, and what to do.
    public var errorDescription: String? { description }
}

extension CorruptionReason: LocalizedError {
    /// The reason's ``description``.
    public var errorDescription: String? { description }
}
