import Foundation
import MappedKVFormat

// One pair of names stores any Codable value: `set(_:forKey:)` and `value(forKey:as:)`. A type with a
// native MMKV payload (`PayloadCodable`: numbers, Bool, String, bytes, Data, [String], Date, UUID, URL)
// is always stored as that payload, the bytes an MMKV app on another platform reads back; any other
// type is stored as its JSON encoding in a bytes payload (docs/FORMAT.md 2.5).
//
// The invariant: the bytes stored for a value depend only on its type, never on the call site. A
// concrete call picks the protocol requirement (the native payload) by overload ranking, and the
// Codable overloads below check at run time whether the type has a native payload, so a value that
// reaches them through a generic `T: Codable` gets the same native bytes. The check is on the
// metatype, not the value, so `Optional<Int32>` (which has no native payload) is JSON both ways.
extension KeyValueAccess {
    /// Stores any `Encodable` value under `key`: as its native MMKV payload if `V` has one
    /// (``MappedKVFormat/PayloadCodable``), otherwise as JSON (with sorted keys, so equal values
    /// store equal bytes) in a bytes payload.
    ///
    /// ```swift
    /// struct Config: Codable { var name: String }
    /// try store.set(Config(name: "svc"), forKey: "config")   // JSON bytes
    /// try store.set(Int32(3), forKey: "retries")              // MMKV int32, not JSON
    /// ```
    ///
    /// - Throws: ``MappedKVError/valueEncodingFailed(key:reason:)`` if encoding fails, or any error
    ///   of ``set(_:forKey:)``.
    public func set<V: Encodable>(_ value: V, forKey key: String) throws(MappedKVError) {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys  // equal values, equal bytes
        try set(value, forKey: key, encoder: encoder)
    }

    /// Stores any `Encodable` value under `key`, encoding types without a native payload with
    /// `encoder`. A type with a native payload ignores `encoder`, so ``value(forKey:as:)`` reads
    /// every value back the same way.
    public func set<V: Encodable>(_ value: V, forKey key: String, encoder: JSONEncoder) throws(MappedKVError) {
        if let native = V.self as? any (PayloadCodable & Sendable).Type {
            try setNative(value, as: native, forKey: key)
            return
        }
        let data: Data
        do { data = try encoder.encode(value) } catch {
            throw .valueEncodingFailed(key: key, reason: "\(error)")
        }
        try set(data, forKey: key)
    }

    /// The value of `key` decoded as any `Decodable` type, or nil if the key is absent: from its
    /// native MMKV payload if `V` has one, otherwise from JSON in a bytes payload.
    ///
    /// ```swift
    /// let config = try store.value(forKey: "config", as: Config.self)
    /// let retries: Int32? = try store.value(forKey: "retries")
    /// ```
    ///
    /// - Throws: ``MappedKVError/valueDecodingFailed(key:type:reason:)`` if the stored bytes are not a
    ///   `V` (see docs/FORMAT.md 2.5 for what can be detected).
    public func value<V: Decodable>(forKey key: String, as type: V.Type = V.self) throws(MappedKVError) -> V? {
        try value(forKey: key, as: type, decoder: JSONDecoder())
    }

    /// ``value(forKey:as:)`` decoding types without a native payload with `decoder`.
    public func value<V: Decodable>(
        forKey key: String, as type: V.Type = V.self, decoder: JSONDecoder
    ) throws(MappedKVError) -> V? {
        if let native = V.self as? any (PayloadCodable & Sendable).Type {
            return try nativeValue(forKey: key, as: native) as? V
        }
        guard let data = try value(forKey: key, as: Data.self) else { return nil }
        do { return try decoder.decode(V.self, from: data) } catch {
            throw .valueDecodingFailed(key: key, type: "\(V.self)", reason: "not JSON for \(V.self): \(error)")
        }
    }

    /// The value of `key` decoded as any `Decodable` type, or `defaultValue` if the key is absent.
    public func value<V: Decodable>(forKey key: String, default defaultValue: V) throws(MappedKVError) -> V {
        try value(forKey: key, as: V.self) ?? defaultValue
    }

    /// The value of `key` from its native payload, or `defaultValue` if the key is absent (the
    /// overload for types that are both `PayloadCodable` and `Decodable`).
    public func value<V: PayloadCodable & Sendable & Decodable>(
        forKey key: String, default defaultValue: V
    ) throws(MappedKVError) -> V {
        try value(forKey: key, as: V.self) ?? defaultValue
    }

    /// The protocol requirement's `set`, called with `V` opened from an existential metatype as `N`
    /// (the same type, so the cast always succeeds).
    private func setNative<V, N: PayloadCodable & Sendable>(
        _ value: V, as type: N.Type, forKey key: String
    ) throws(MappedKVError) {
        guard let native = value as? N else {
            throw .valueEncodingFailed(key: key, reason: "\(V.self) did not cast to its own native type \(N.self)")
        }
        try set(native, forKey: key)
    }

    /// The protocol requirement's `value`, called with a type opened from an existential metatype.
    private func nativeValue<N: PayloadCodable & Sendable>(
        forKey key: String, as type: N.Type
    ) throws(MappedKVError) -> N? {
        try value(forKey: key, as: type)
    }
}
