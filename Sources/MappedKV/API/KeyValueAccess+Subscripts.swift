import MappedKVFormat

// Subscripts for reading: `store[key]` and `store[key, default:]`, on every `KeyValueAccess` (a
// store and a transaction). They are get-only on purpose: a Swift subscript setter cannot throw,
// and a write can fail (invalid key, read-only store, full disk, closed handle). A setter would
// have to drop or hide those errors, so writes go through the throwing `set(_:forKey:)`.
//
// The type comes from the context (`let n: Int32? = try store["retries"]`); each subscript reads
// as `value(forKey:as:)` does: the native payload for `PayloadCodable` types, JSON for other
// `Decodable` types. The third overload of each pair only settles the choice for types that are
// both, which would otherwise be ambiguous.
extension KeyValueAccess {
    /// The value of `key` as the type the context asks for, or nil if the key is absent.
    ///
    /// ```swift
    /// let retries: Int32? = try store["retries"]
    /// ```
    public subscript<V: PayloadCodable & Sendable>(key: String) -> V? {
        get throws(MappedKVError) { try value(forKey: key, as: V.self) }
    }

    /// The value of `key` decoded as any `Decodable` type (JSON unless the type has a native
    /// payload), or nil if the key is absent.
    public subscript<V: Decodable>(key: String) -> V? {
        get throws(MappedKVError) { try value(forKey: key, as: V.self) }
    }

    /// The value of `key` from its native payload, or nil if the key is absent.
    public subscript<V: PayloadCodable & Sendable & Decodable>(key: String) -> V? {
        get throws(MappedKVError) { try value(forKey: key, as: V.self) }
    }

    /// The value of `key`, or `defaultValue` if the key is absent.
    ///
    /// ```swift
    /// let retries = try store["retries", default: Int32(3)]
    /// ```
    public subscript<V: PayloadCodable & Sendable>(key: String, default defaultValue: V) -> V {
        get throws(MappedKVError) { try value(forKey: key, as: V.self) ?? defaultValue }
    }

    /// The value of `key` decoded as any `Decodable` type, or `defaultValue` if the key is absent.
    public subscript<V: Decodable>(key: String, default defaultValue: V) -> V {
        get throws(MappedKVError) { try value(forKey: key, as: V.self) ?? defaultValue }
    }

    /// The value of `key` from its native payload, or `defaultValue` if the key is absent.
    public subscript<V: PayloadCodable & Sendable & Decodable>(key: String, default defaultValue: V) -> V {
        get throws(MappedKVError) { try value(forKey: key, as: V.self) ?? defaultValue }
    }
}
