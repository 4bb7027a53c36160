import Foundation

/// Turns a bucket's values into bytes and back. Each bucket is opened with one; the bucket and key
/// are passed so that a serializer can vary by entry (a version per bucket, say).
///
/// Implementations must be deterministic enough that `decode(encode(v))` gives back an equal value.
public protocol EntrySerializer<Value>: Sendable {
    /// The type of the bucket's values.
    associatedtype Value
    /// The bytes to store for `value`.
    func encode(_ value: Value, bucket: String, key: String) throws -> [UInt8]
    /// The value stored as `bytes`.
    func decode(_ bytes: [UInt8], bucket: String, key: String) throws -> Value
}

/// The default serializer: `Codable` values as JSON (keys sorted, so equal values give equal bytes).
public struct JSONEntrySerializer<Value: Codable>: EntrySerializer {
    // Made once: an encoder or decoder is safe to share, its options are not changed afterwards.
    private let encoder: JSONEncoder
    private let decoder: JSONDecoder

    /// Creates the serializer.
    public init() {
        encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .millisecondsSince1970
        decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .millisecondsSince1970
    }

    /// The JSON of `value`.
    public func encode(_ value: Value, bucket: String, key: String) throws -> [UInt8] {
        [UInt8](try encoder.encode(value))
    }

    /// The value of the JSON `bytes`.
    public func decode(_ bytes: [UInt8], bucket: String, key: String) throws -> Value {
        try decoder.decode(Value.self, from: Data(bytes))
    }
}

/// Bytes stored as they are: for buckets of raw data.
public struct RawEntrySerializer: EntrySerializer {
    /// Creates the serializer.
    public init() {}
    /// The bytes themselves.
    public func encode(_ value: [UInt8], bucket: String, key: String) throws -> [UInt8] { value }
    /// The bytes themselves.
    public func decode(_ bytes: [UInt8], bucket: String, key: String) throws -> [UInt8] { bytes }
}
