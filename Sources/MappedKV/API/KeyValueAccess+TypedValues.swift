import Foundation
import MappedKVFormat

extension KeyValueAccess {
    /// The value of `key` decoded as `V`, or `defaultValue` if the key is absent.
    public func value<V: PayloadCodable & Sendable>(
        forKey key: String, default defaultValue: V
    ) throws(MappedKVError) -> V {
        try value(forKey: key, as: V.self) ?? defaultValue
    }

    /// The `Bool` value of `key`, or nil.
    public func bool(forKey key: String) throws(MappedKVError) -> Bool? { try value(forKey: key, as: Bool.self) }
    /// The `Int32` value of `key`, or nil.
    public func int32(forKey key: String) throws(MappedKVError) -> Int32? { try value(forKey: key, as: Int32.self) }
    /// The `UInt32` value of `key`, or nil.
    public func uint32(forKey key: String) throws(MappedKVError) -> UInt32? { try value(forKey: key, as: UInt32.self) }
    /// The `Int64` value of `key`, or nil.
    public func int64(forKey key: String) throws(MappedKVError) -> Int64? { try value(forKey: key, as: Int64.self) }
    /// The `UInt64` value of `key`, or nil.
    public func uint64(forKey key: String) throws(MappedKVError) -> UInt64? { try value(forKey: key, as: UInt64.self) }
    /// The `Int` value of `key` (stored as an MMKV int64), or nil.
    public func int(forKey key: String) throws(MappedKVError) -> Int? { try value(forKey: key, as: Int.self) }
    /// The `Float` value of `key`, or nil.
    public func float(forKey key: String) throws(MappedKVError) -> Float? { try value(forKey: key, as: Float.self) }
    /// The `Double` value of `key`, or nil.
    public func double(forKey key: String) throws(MappedKVError) -> Double? { try value(forKey: key, as: Double.self) }
    /// The `String` value of `key`, or nil.
    public func string(forKey key: String) throws(MappedKVError) -> String? { try value(forKey: key, as: String.self) }
    /// The bytes value of `key`, or nil.
    public func bytes(forKey key: String) throws(MappedKVError) -> [UInt8]? { try value(forKey: key, as: [UInt8].self) }
    /// The bytes value of `key` as `Data`, or nil.
    public func data(forKey key: String) throws(MappedKVError) -> Data? { try value(forKey: key, as: Data.self) }
    /// The string-vector value of `key`, or nil.
    public func strings(forKey key: String) throws(MappedKVError) -> [String]? {
        try value(forKey: key, as: [String].self)
    }
    /// The `Date` value of `key` (a Double of seconds since 1970), or nil.
    public func date(forKey key: String) throws(MappedKVError) -> Date? { try value(forKey: key, as: Date.self) }

    /// Stores `value` JSON-encoded, as a bytes payload, even if its type has a native payload.
    ///
    /// Deprecated: ``KeyValueAccess/set(_:forKey:)`` stores any `Encodable` value, as JSON unless its type has a
    /// native payload (then it writes that payload instead, where this wrote JSON).
    @available(*, deprecated, renamed: "set(_:forKey:encoder:)")
    public func set<T: Encodable>(
        encoding value: T, forKey key: String, encoder: JSONEncoder = JSONEncoder()
    ) throws(MappedKVError) {
        let data: Data
        do { data = try encoder.encode(value) } catch {
            throw .valueEncodingFailed(key: key, reason: "\(error)")
        }
        try set(data, forKey: key)
    }

    /// The value of `key` decoded from JSON as `type`, or nil if the key is absent.
    ///
    /// Deprecated: ``value(forKey:as:)`` reads any `Decodable` type, from JSON unless the type has a
    /// native payload.
    @available(*, deprecated, message: "use value(forKey:as:) or value(forKey:as:decoder:)")
    public func decoded<T: Decodable>(
        _ type: T.Type, forKey key: String, decoder: JSONDecoder = JSONDecoder()
    ) throws(MappedKVError) -> T? {
        guard let data = try data(forKey: key) else { return nil }
        do { return try decoder.decode(T.self, from: data) } catch {
            throw .valueDecodingFailed(key: key, type: "\(T.self)", reason: "\(error)")
        }
    }
}

extension Data: PayloadCodable {
    /// `varint(count)` followed by the bytes, like MMKV's bytes (`MMBuffer`) values.
    public func encodePayload(into bytes: inout [UInt8]) {
        Varint.append(UInt64(count), to: &bytes)
        bytes.append(contentsOf: self)
    }
    /// Reads the inner length and that many bytes, which must be exactly the rest of the payload.
    public init(payload: UnsafeRawBufferPointer) throws(FormatError) {
        var cursor = ByteCursor(payload)
        self = Data(try cursor.readWholeLengthDelimited(expected: "bytes (varint(n) + n bytes)"))
    }
}

extension Date: PayloadCodable {
    /// A Double of seconds since 1970, as MMKV stores `NSDate` on Apple platforms.
    public func encodePayload(into bytes: inout [UInt8]) { timeIntervalSince1970.encodePayload(into: &bytes) }
    /// A Double of seconds since 1970.
    public init(payload: UnsafeRawBufferPointer) throws(FormatError) {
        self = Date(timeIntervalSince1970: try Double(payload: payload))
    }
}
