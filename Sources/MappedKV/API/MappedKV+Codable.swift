import Foundation
import MappedKVFormat

// Any Codable value with an expiry, as `set(_:forKey:)` of `KeyValueAccess+Codable.swift` without
// one: the native payload when the type has one (checked on the type at run time too), JSON with
// sorted keys otherwise. The third overload only settles the choice for types that are both
// `PayloadCodable` and `Encodable`, which would otherwise be ambiguous.
extension MappedKV {
    /// Stores any `Encodable` value under `key`, to expire `duration` after now (as
    /// ``set(_:forKey:expiresAfter:)`` for native types): its native payload if `V` has one,
    /// otherwise JSON in a bytes payload. Key expiry must be on.
    public func set<V: Encodable>(
        _ value: V, forKey key: String, expiresAfter duration: Duration
    ) throws(MappedKVError) {
        if let native = V.self as? any (PayloadCodable & Sendable).Type {
            try setNative(value, as: native, forKey: key, expiresAfter: duration)
            return
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        let data: Data
        do { data = try encoder.encode(value) } catch {
            throw .valueEncodingFailed(key: key, reason: "\(error)")
        }
        try setPayload(data, forKey: key, expiresAfter: duration)
    }

    /// Stores a value that has a native payload under `key`, to expire `duration` after now.
    public func set<V: PayloadCodable & Sendable & Encodable>(
        _ value: V, forKey key: String, expiresAfter duration: Duration
    ) throws(MappedKVError) {
        try setPayload(value, forKey: key, expiresAfter: duration)
    }

    /// `V` opened from an existential metatype as `N` (the same type, so the cast succeeds).
    private func setNative<V, N: PayloadCodable & Sendable>(
        _ value: V, as type: N.Type, forKey key: String, expiresAfter duration: Duration
    ) throws(MappedKVError) {
        guard let native = value as? N else {
            throw .valueEncodingFailed(key: key, reason: "\(V.self) did not cast to its own native type \(N.self)")
        }
        try setPayload(native, forKey: key, expiresAfter: duration)
    }

    /// The native set with an expiry, called directly so no overload can recurse.
    private func setPayload<N: PayloadCodable & Sendable>(
        _ value: N, forKey key: String, expiresAfter duration: Duration
    ) throws(MappedKVError) {
        metrics?.countSet()
        let seconds = MappedKV.expirySeconds(duration)
        try withCore { (core) throws(MappedKVError) in try core.set(value, forKey: key, expiresAfter: seconds) }
    }
}
