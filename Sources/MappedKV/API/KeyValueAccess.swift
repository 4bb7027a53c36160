import MappedKVFormat

/// The reads and writes shared by a store handle (``MappedKV``) and a transaction inside its
/// exclusive lock (``MappedKV/Transaction``); the typed getters are built on them.
///
/// Both conform, so everything a store reads or writes by key can be done inside a transaction
/// too, and the compiler keeps the two from drifting apart.
public protocol KeyValueAccess {
    /// Stores `value` under `key`, replacing any previous value.
    func set<V: PayloadCodable & Sendable>(_ value: V, forKey key: String) throws(MappedKVError)
    /// Stores `value` under `key`, to expire `duration` after now (whole seconds, rounded up;
    /// `.zero` means never). Key expiry must be on: see ``MappedKV/enableKeyExpiry(defaultDuration:)``.
    func set<V: PayloadCodable & Sendable>(
        _ value: V, forKey key: String, expiresAfter duration: Duration
    ) throws(MappedKVError)
    /// The value of `key` decoded as `type`, or nil if the key is absent.
    func value<V: PayloadCodable & Sendable>(forKey key: String, as type: V.Type) throws(MappedKVError) -> V?
    /// The stored payload bytes of `key` (the type-specific encoding of docs/FORMAT.md 2.5), or nil.
    func payload(forKey key: String) throws(MappedKVError) -> [UInt8]?
    /// Removes `key`; removing an absent key does nothing.
    func removeValue(forKey key: String) throws(MappedKVError)
    /// Whether `key` has a value.
    func contains(_ key: String) throws(MappedKVError) -> Bool
    /// The number of keys.
    var count: Int { get throws(MappedKVError) }
    /// Every key, sorted by UTF-8 bytes.
    var allKeys: [String] { get throws(MappedKVError) }
    /// Every key with its stored payload bytes, sorted by key bytes.
    func entries() throws(MappedKVError) -> [(key: String, payload: [UInt8])]
    /// Removes every key.
    func clearAll() throws(MappedKVError)
}

extension KeyValueAccess {
    /// The size of the value of `key`: for a string or bytes payload (`varint(n)` then n bytes) n,
    /// otherwise the payload length, as MMKV's `getValueSize(key, actualSize: true)`; nil if absent.
    /// With `actualSize` false, always the payload length.
    public func valueSize(forKey key: String, actualSize: Bool = true) throws(MappedKVError) -> Int? {
        guard let payload = try payload(forKey: key) else { return nil }
        guard actualSize else { return payload.count }
        return payload.withUnsafeBytes { bytes in
            var cursor = ByteCursor(bytes)
            if let length = try? cursor.readLength(), length == cursor.remaining,
                cursor.position == Varint.size(of: UInt64(length))
            {
                return length
            }
            return bytes.count
        }
    }
}
