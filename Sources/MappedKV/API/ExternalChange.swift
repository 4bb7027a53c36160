/// A change to a store made by another process, noticed by this one (multi-process mode).
///
/// Like MMKV's `onContentChangedByOuterProcess`, changes are noticed lazily: on the next access
/// to the store, or when ``MappedKV/checkForChanges()`` is called. Nothing is pushed.
public struct ExternalChange: Sendable, Equatable, CustomStringConvertible {
    /// What kind of change was found.
    public enum Kind: Sendable, Equatable, CustomStringConvertible {
        /// Records were appended; only they were decoded.
        case appended(records: Int)
        /// The files were rewritten, resized or otherwise changed as a whole, and reloaded.
        case reloaded

        public var description: String {
            switch self {
            case .appended(let records): "appended(\(records))"
            case .reloaded: "reloaded"
            }
        }
    }

    /// The store's ID.
    public var storeID: String
    /// What changed.
    public var kind: Kind
    /// The meta sequence after the change.
    public var sequence: UInt32

    /// A change record.
    public init(storeID: String, kind: Kind, sequence: UInt32) {
        self.storeID = storeID
        self.kind = kind
        self.sequence = sequence
    }

    public var description: String { "\(storeID): \(kind) at sequence \(sequence)" }
}
