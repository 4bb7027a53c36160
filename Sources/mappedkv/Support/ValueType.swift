import ArgumentParser
import MappedKV
import MappedKVFormat

/// The value types the CLI can read and write; the file itself records no types.
enum ValueType: String, CaseIterable, ExpressibleByArgument {
    case bool, int32, uint32, int64, uint64, float, double, string, bytes, strings
    /// The raw stored payload, as hex.
    case payload

    /// Parses `text` as this type and stores it under `key`. `bytes` and `payload` take hex;
    /// `strings` takes items separated by commas.
    func set(_ text: String, forKey key: String, in kv: MappedKV, expiresAfter seconds: UInt32? = nil) throws -> Bool {
        let store = TypedSetter(store: kv, seconds: seconds)
        switch self {
        case .bool:
            guard let value = Self.parseBool(text) else { return false }
            try store.set(value, forKey: key)
        case .int32:
            guard let value = Int32(text) else { return false }
            try store.set(value, forKey: key)
        case .uint32:
            guard let value = UInt32(text) else { return false }
            try store.set(value, forKey: key)
        case .int64:
            guard let value = Int64(text) else { return false }
            try store.set(value, forKey: key)
        case .uint64:
            guard let value = UInt64(text) else { return false }
            try store.set(value, forKey: key)
        case .float:
            guard let value = Float(text) else { return false }
            try store.set(value, forKey: key)
        case .double:
            guard let value = Double(text) else { return false }
            try store.set(value, forKey: key)
        case .string:
            try store.set(text, forKey: key)
        case .bytes:
            guard let value = Hex.decode(text) else { return false }
            try store.set(value, forKey: key)
        case .strings:
            try store.set(
                text.isEmpty ? [] : text.split(separator: ",", omittingEmptySubsequences: false).map(String.init),
                forKey: key)
        case .payload:
            guard let value = Hex.decode(text), !value.isEmpty else { return false }
            try store.set(RawPayload(bytes: value), forKey: key)
        }
        return true
    }

    /// The value of `key` formatted as this type, or nil if the key is absent.
    func get(forKey key: String, in store: MappedKV) throws -> String? {
        switch self {
        case .bool: try store.bool(forKey: key).map { $0 ? "true" : "false" }
        case .int32: try store.int32(forKey: key).map { String($0) }
        case .uint32: try store.uint32(forKey: key).map { String($0) }
        case .int64: try store.int64(forKey: key).map { String($0) }
        case .uint64: try store.uint64(forKey: key).map { String($0) }
        case .float: try store.float(forKey: key).map { String($0) }
        case .double: try store.double(forKey: key).map { String($0) }
        case .string: try store.string(forKey: key)
        case .bytes: try store.bytes(forKey: key).map { Hex.encode($0) }
        case .strings: try store.strings(forKey: key).map { $0.joined(separator: ",") }
        case .payload: try store.payload(forKey: key).map { Hex.encode($0) }
        }
    }

    static func parseBool(_ text: String) -> Bool? {
        switch text.lowercased() {
        case "true", "1", "yes": true
        case "false", "0", "no": false
        default: nil
        }
    }
}

/// Payload bytes stored exactly as given.
struct RawPayload: PayloadCodable, Sendable {
    var bytes: [UInt8]
    func encodePayload(into output: inout [UInt8]) { output.append(contentsOf: bytes) }
    init(bytes: [UInt8]) { self.bytes = bytes }
    init(payload: UnsafeRawBufferPointer) { bytes = Array(payload) }
}

/// Sets values with or without an expiry duration.
struct TypedSetter {
    var store: MappedKV
    var seconds: UInt32?

    func set<V: PayloadCodable & Sendable>(_ value: V, forKey key: String) throws {
        if let seconds {
            try store.set(value, forKey: key, expiresAfter: .seconds(seconds))
        } else {
            try store.set(value, forKey: key)
        }
    }
}
