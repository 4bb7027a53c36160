/// One key's value as it is stored: the key, the payload bytes (the encoding of
/// docs/FORMAT.md 2.5, without any expiry suffix) and the value's expiry time.
///
/// MMKV files record no value types, so a payload is the only exact form of a value: writing it
/// back with ``MappedKV/importEntries(_:)`` reproduces the value byte for byte, whatever its type.
/// ``MappedKV/exportedEntries()`` returns a store's entries in this form.
public struct StoreEntry: Sendable, Equatable {
    /// The key.
    public var key: String
    /// The stored payload bytes; never empty (an empty value is a deletion record).
    public var payload: [UInt8]
    /// When the value expires, in whole seconds since 1970; 0 (`ExpirySuffix.never`) means
    /// never. Nil when the value carries no expiry time: exported from a store with key expiry
    /// off, or, on import, to be given the store's default lifetime.
    public var expiresAt: UInt32?

    /// Creates an entry.
    public init(key: String, payload: [UInt8], expiresAt: UInt32? = nil) {
        self.key = key
        self.payload = payload
        self.expiresAt = expiresAt
    }
}
