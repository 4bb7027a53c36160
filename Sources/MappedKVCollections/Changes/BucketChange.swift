// One element of a bucket's change stream. The invariant: a `put` or `remove` names a key of the
// bucket the stream watches and says what the write did to it; a `resync` stands for changes the
// stream could not name, so a consumer that re-reads the bucket on it misses nothing.

/// A change to one bucket, as ``Bucket/changes(bufferLimit:)`` yields it.
///
/// ```swift
/// for await change in posts.changes() {
///     switch change {
///     case .put(let key): print("put", key)
///     case .remove(let key): print("removed", key)
///     case .resync: print("re-read the bucket")
///     }
/// }
/// ```
public enum BucketChange: Sendable, Hashable, CustomStringConvertible {
    /// `key` was put (a ``Bucket/put(_:forKey:metadata:)`` or an entry of
    /// ``Bucket/importEntries(_:)``): the bucket has an entry for it.
    case put(key: String)
    /// `key` was removed (``Bucket/remove(_:)``, or one of the entries ``Bucket/removeAll()`` or
    /// ``CollectionStore/removeBucket(_:)`` removed).
    case remove(key: String)
    /// Changes happened that the stream does not name one by one: re-read what you need of the
    /// bucket. Changes after this one are named again.
    case resync(ResyncReason)

    /// Why a ``BucketChange/resync(_:)`` was yielded.
    public enum ResyncReason: String, Sendable, Hashable {
        /// More changes were waiting than the stream's buffer holds: the waiting ones were dropped.
        case overflow
        /// Another process rewrote the store as a whole (a compaction, a resize, a repair, a
        /// rekey, `clearAll`, `trim`): its changes since the last one seen name no keys.
        case storeRewritten
    }

    /// The key a put or remove names; nil for a resync.
    public var key: String? {
        switch self {
        case .put(let key), .remove(let key): key
        case .resync: nil
        }
    }

    /// `put <key>`, `remove <key>` or `resync (<reason>)`.
    public var description: String {
        switch self {
        case .put(let key): "put \(key)"
        case .remove(let key): "remove \(key)"
        case .resync(let reason): "resync (\(reason.rawValue))"
        }
    }
}
