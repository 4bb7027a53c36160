// The default serializer: any `Codable` value as JSON.
//
// Invariant: encoding and decoding use fresh coders configured the same way, so the serializer keeps
// no mutable state and is safe to share between threads.

import Foundation

/// Stores any `Codable` value as JSON, with Foundation's `JSONEncoder` and `JSONDecoder`.
///
/// Keys are sorted, so equal values encode to equal bytes. Dates and binary data use the coders'
/// default strategies.
public struct JSONCacheSerializer<Value: Codable & Sendable>: CacheSerializer {
    /// Makes a JSON serializer.
    public init() {}

    /// The JSON encoding of `value`.
    ///
    /// - Parameter value: The value to encode.
    /// - Returns: The value as UTF-8 JSON.
    /// - Throws: `EncodingError` when `value` cannot be encoded, such as a non-finite floating-point
    ///   number.
    public func encode(_ value: Value) throws -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return [UInt8](try encoder.encode(value))
    }

    /// The value encoded in the JSON `bytes`.
    ///
    /// - Parameter bytes: UTF-8 JSON produced by ``encode(_:)``.
    /// - Returns: The decoded value.
    /// - Throws: `DecodingError` when `bytes` are not JSON for a `Value`.
    public func decode(_ bytes: [UInt8]) throws -> Value {
        try JSONDecoder().decode(Value.self, from: Data(bytes))
    }
}
