import MappedKV

/// What can go wrong with a collection store beyond the store's own errors.
public enum CollectionError: Error, Equatable, Sendable, CustomStringConvertible {
    /// An error of the underlying store.
    case store(MappedKVError)
    /// The store holds plain keys and no collection marker: opening it as a collection store would
    /// misread them.
    case notACollectionStore(id: String)
    /// The marker names a format version this module does not know.
    case unsupportedFormat(id: String, version: String)
    /// An entry's stored bytes are not an entry record (damage, or a write by another program).
    case malformedEntry(bucket: String, key: String, reason: String)
    /// The serializer could not encode the value.
    case encodingFailed(bucket: String, key: String, reason: String)
    /// The serializer could not decode the stored value.
    case decodingFailed(bucket: String, key: String, reason: String)
    /// A query or index operation names an index the bucket does not have.
    case unknownIndex(bucket: String, name: String)
    /// A put or a new unique index would give two entries the same value of a unique index;
    /// nothing was changed.
    case uniqueConflict(bucket: String, index: String, key: String, existingKey: String)
    /// An index definition is not valid (a name in use with another definition, a bad source).
    case invalidIndex(bucket: String, name: String, reason: String)

    /// What happened, to which store or entry, and what to do.
    public var description: String {
        switch self {
        case .store(let error): error.description
        case .notACollectionStore(let id):
            "store '\(id)' holds plain keys, not a collection: open it with MappedKV, or use another ID for a "
                + "collection store"
        case .unsupportedFormat(let id, let version):
            "store '\(id)' is a collection store of format \(version), which this version cannot read: upgrade "
                + "MappedKVCollections"
        case .malformedEntry(let bucket, let key, let reason):
            "the entry '\(key)' of bucket '\(bucket)' is not a valid entry record (\(reason)): remove it, or "
                + "check the store with `mappedkv verify`"
        case .encodingFailed(let bucket, let key, let reason):
            "the value for '\(key)' in bucket '\(bucket)' could not be encoded: \(reason)"
        case .decodingFailed(let bucket, let key, let reason):
            "the value of '\(key)' in bucket '\(bucket)' could not be decoded by the bucket's serializer "
                + "(\(reason)): open the bucket with the serializer and type it was written with"
        case .unknownIndex(let bucket, let name):
            "bucket '\(bucket)' has no index '\(name)': add it first (Bucket.addIndex, `mappedkv bucket index add`)"
        case .uniqueConflict(let bucket, let index, let key, let existingKey):
            "'\(key)' would have the same value of the unique index '\(index)' of bucket '\(bucket)' as "
                + "'\(existingKey)': nothing was changed"
        case .invalidIndex(let bucket, let name, let reason):
            "index '\(name)' of bucket '\(bucket)': \(reason)"
        }
    }
}
