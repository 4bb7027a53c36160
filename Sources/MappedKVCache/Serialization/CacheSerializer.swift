// How a cache turns values into bytes and back.
//
// Invariant: for every value a serializer encodes, decoding the bytes gives back an equal value.

/// Turns cache values into bytes for storage and back.
///
/// Conformers must round-trip: `decode(encode(value))` gives back a value equal to `value`. Both
/// methods may be called from any thread at the same time.
public protocol CacheSerializer<Value>: Sendable {
    /// The type of value this serializer handles.
    associatedtype Value

    /// The bytes that stand for `value`.
    ///
    /// - Parameter value: The value to encode.
    /// - Returns: Bytes that ``decode(_:)`` turns back into `value`.
    /// - Throws: When `value` cannot be encoded.
    func encode(_ value: Value) throws -> [UInt8]

    /// The value that `bytes` stand for.
    ///
    /// - Parameter bytes: Bytes that ``encode(_:)`` produced.
    /// - Returns: The decoded value.
    /// - Throws: When `bytes` do not stand for a value, for instance after corruption.
    func decode(_ bytes: [UInt8]) throws -> Value
}
