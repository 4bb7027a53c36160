import MappedKVFormat

/// The reads and writes shared by a store handle (``MappedKV``) and a transaction inside its
/// exclusive lock (``MappedKV/Transaction``); the typed getters are built on them.
public protocol KeyValueAccess {
    /// Stores `value` under `key`, replacing any previous value.
    func set<V: PayloadCodable & Sendable>(_ value: V, forKey key: String) throws(MappedKVError)
    /// The value of `key` decoded as `type`, or nil if the key is absent.
    func value<V: PayloadCodable & Sendable>(forKey key: String, as type: V.Type) throws(MappedKVError) -> V?
    /// Removes `key`; removing an absent key does nothing.
    func removeValue(forKey key: String) throws(MappedKVError)
    /// Whether `key` has a value.
    func contains(_ key: String) throws(MappedKVError) -> Bool
}
