import Foundation

/// One entry of a bucket: its value with the metadata stored beside it in the same record.
public struct Entry<Value> {
    /// The bucket.
    public var bucket: String
    /// The key within the bucket.
    public var key: String
    /// The decoded value.
    public var value: Value
    /// The caller's metadata: names to strings, integers, doubles or dates.
    public var metadata: [String: MetadataValue]
    /// When the key was first put (kept by later puts until it is removed), to the millisecond.
    public var created: Date
    /// When the entry was last put, to the millisecond.
    public var modified: Date

    /// Creates an entry (to import with ``Bucket/importEntries(_:)``).
    public init(
        bucket: String, key: String, value: Value, metadata: [String: MetadataValue] = [:], created: Date,
        modified: Date
    ) {
        self.bucket = bucket
        self.key = key
        self.value = value
        self.metadata = metadata
        self.created = created
        self.modified = modified
    }
}

extension Entry: Sendable where Value: Sendable {}
extension Entry: Equatable where Value: Equatable {}
