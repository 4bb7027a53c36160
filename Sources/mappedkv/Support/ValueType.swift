import ArgumentParser
import Foundation
import MappedKV
import MappedKVFormat

/// The value types the CLI can read and write. MMKV files record no types, so the reader names
/// one; a payload that is not exactly one value of that type is refused, never printed as
/// something plausible.
enum ValueType: String, CaseIterable, ExpressibleByArgument {
    case bool, int32, uint32, int64, uint64, float, double, string, bytes, strings
    /// The raw stored payload, as hex.
    case payload

    /// The names, for help texts.
    static let names = allCases.map(\.rawValue).joined(separator: ", ")

    /// The payload of `text` read as this type, or nil if it is not one. `bytes` and `payload`
    /// take hex; `strings` takes items separated by commas.
    func payload(fromText text: String) -> [UInt8]? {
        switch self {
        case .bool: Self.parseBool(text)?.payloadBytes
        case .int32: Int32(text)?.payloadBytes
        case .uint32: UInt32(text)?.payloadBytes
        case .int64: Int64(text)?.payloadBytes
        case .uint64: UInt64(text)?.payloadBytes
        case .float: Float(text)?.payloadBytes
        case .double: Double(text)?.payloadBytes
        case .string: text.payloadBytes
        case .bytes: Hex.decode(text)?.payloadBytes
        case .strings:
            (text.isEmpty ? [] : text.split(separator: ",", omittingEmptySubsequences: false).map(String.init))
                .payloadBytes
        case .payload: Hex.decode(text).flatMap { $0.isEmpty ? nil : $0 }
        }
    }

    /// `payload` decoded as this type, as the text `get` prints.
    func text(fromPayload payload: [UInt8]) throws(FormatError) -> String {
        switch try decoded(payload) {
        case .bool(let value): value ? "true" : "false"
        case .number(let text): text
        case .text(let value): value
        case .hex(let bytes): Hex.encode(bytes)
        case .list(let items): items.joined(separator: ",")
        }
    }

    /// `payload` decoded as this type, as a JSON value: a bool, a number, a string (hex for
    /// `bytes` and `payload`) or an array of strings.
    func jsonValue(fromPayload payload: [UInt8]) throws(FormatError) -> Any {
        switch try decoded(payload) {
        case .bool(let value): value
        case .number:
            switch self {
            case .int32: Int(try Int32(payloadBytes: payload))
            case .uint32: Int(try UInt32(payloadBytes: payload))
            case .int64: Int(try Int64(payloadBytes: payload))
            case .uint64: try UInt64(payloadBytes: payload)
            case .float: Double(try Float(payloadBytes: payload))
            default: try Double(payloadBytes: payload)
            }
        case .text(let value): value
        case .hex(let bytes): Hex.encode(bytes)
        case .list(let items): items
        }
    }

    /// The payload of a JSON value (as ``jsonValue(fromPayload:)`` gives it, or its text form).
    func payload(fromJSON value: Any) -> [UInt8]? {
        if self == .strings, let items = value as? [String] { return items.payloadBytes }
        if self == .bool, let flag = value as? Bool { return flag.payloadBytes }
        if let text = value as? String { return payload(fromText: text) }
        if let number = value as? NSNumber, self != .string, self != .bytes, self != .payload {
            // NSNumber's description keeps integers exact and prints doubles in full.
            return payload(fromText: number.stringValue)
        }
        return nil
    }

    /// A decoded value, before it is rendered as text or JSON.
    private enum Decoded {
        case bool(Bool)
        case number(String)
        case text(String)
        case hex([UInt8])
        case list([String])
    }

    private func decoded(_ payload: [UInt8]) throws(FormatError) -> Decoded {
        switch self {
        case .bool: .bool(try Bool(payloadBytes: payload))
        case .int32: .number(String(try Int32(payloadBytes: payload)))
        case .uint32: .number(String(try UInt32(payloadBytes: payload)))
        case .int64: .number(String(try Int64(payloadBytes: payload)))
        case .uint64: .number(String(try UInt64(payloadBytes: payload)))
        case .float: .number(String(try Float(payloadBytes: payload)))
        case .double: .number(String(try Double(payloadBytes: payload)))
        case .string: .text(try String(payloadBytes: payload))
        case .bytes: .hex(try [UInt8](payloadBytes: payload))
        case .strings: .list(try [String](payloadBytes: payload))
        case .payload: .hex(payload)
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

extension PayloadCodable {
    /// Decodes a value from payload bytes.
    init(payloadBytes: [UInt8]) throws(FormatError) {
        let decoded = payloadBytes.withUnsafeBytes { buffer in
            Result { () throws(FormatError) -> Self in try Self(payload: buffer) }
        }
        self = try decoded.get()
    }
}

/// Payload bytes stored exactly as given.
struct RawPayload: PayloadCodable, Sendable {
    var bytes: [UInt8]
    func encodePayload(into output: inout [UInt8]) { output.append(contentsOf: bytes) }
    init(bytes: [UInt8]) { self.bytes = bytes }
    init(payload: UnsafeRawBufferPointer) { bytes = Array(payload) }
}
