/// A change to a store made by another process, noticed by this one (multi-process mode).
///
/// While a subscription (``MappedKV/observeExternalChanges(_:)`` or ``MappedKV/externalChanges()``)
/// is active, a watcher notices other processes' changes within about 10 ms, without the store
/// being touched. Without one, changes are noticed lazily, like MMKV's
/// `onContentChangedByOuterProcess`: on the next access to the store, or when
/// ``MappedKV/checkForChanges()`` is called. This process's own writes are never reported.
///
/// ```swift
/// let observation = store.observeExternalChanges { change in
///     if change.mayHaveChanged("region") { print("region changed elsewhere") }
/// }
/// ```
public struct ExternalChange: Sendable, Equatable, CustomStringConvertible {
    /// What kind of change was found.
    public enum Kind: Sendable, Equatable, CustomStringConvertible {
        /// Records were appended; only they were decoded.
        case appended(records: Int)
        /// The files were rewritten, resized or otherwise changed as a whole, and reloaded.
        case reloaded

        /// `appended(<records>)` or `reloaded`.
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
    /// The keys the other process set or removed, when they can be known; nil when everything may
    /// have changed.
    ///
    /// An ``Kind/appended(records:)`` change lists the key of every record appended since the last
    /// change this process saw, removals included (several appends noticed at once are one change).
    /// A ``Kind/reloaded`` change (a compaction, `clearAll`, `trim`, a rekey, a resize, a repair)
    /// carries nil: re-read whatever you need.
    public var changedKeys: Set<String>?

    /// One appended record another process wrote: its key, and whether it removes the key.
    package struct Record: Sendable, Equatable {
        /// The record's key, spelled as ``MappedKV/allKeys`` spells it.
        package var key: String
        /// Whether the record removes its key (an empty value) rather than setting it.
        package var removes: Bool

        package init(key: String, removes: Bool) {
            self.key = key
            self.removes = removes
        }
    }

    /// The records behind ``changedKeys``, in the order they were written (a key written twice is
    /// here twice); nil when ``changedKeys`` is nil, or when the change was made with
    /// ``init(storeID:kind:sequence:changedKeys:)``.
    package var records: [Record]?

    /// A change record; `changedKeys` nil means everything may have changed.
    public init(storeID: String, kind: Kind, sequence: UInt32, changedKeys: Set<String>? = nil) {
        self.storeID = storeID
        self.kind = kind
        self.sequence = sequence
        self.changedKeys = changedKeys
    }

    /// A change record whose ``changedKeys`` are the keys of `records` (nil: everything may have changed).
    package init(storeID: String, kind: Kind, sequence: UInt32, records: [Record]?) {
        self.init(storeID: storeID, kind: kind, sequence: sequence, changedKeys: records.map { Set($0.map(\.key)) })
        self.records = records
    }

    /// Whether the value of `key` may differ after this change: true if the key is in
    /// ``changedKeys`` or if that is nil.
    public func mayHaveChanged(_ key: String) -> Bool { changedKeys?.contains(key) ?? true }

    /// The store, the kind, the sequence and the changed keys (or `all keys`), in one line.
    public var description: String {
        let keys = changedKeys.map { "keys \($0.sorted())" } ?? "all keys"
        return "\(storeID): \(kind) at sequence \(sequence), \(keys)"
    }
}
