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
    func text(fromPayload payload: [UInt8]) throws(FormatError) -> String { try decoded(payload).text }

    /// `payload` decoded as this type, as a JSON value: a bool, a number, a string (hex for
    /// `bytes` and `payload`) or an array of strings.
    func jsonValue(fromPayload payload: [UInt8]) throws(FormatError) -> Any { try decoded(payload).json }

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

    /// `payload` decoded once, as its text and as its JSON value.
    private func decoded(_ payload: [UInt8]) throws(FormatError) -> (text: String, json: Any) {
        func number<N: LosslessStringConvertible>(_ value: N, _ json: Any) -> (text: String, json: Any) {
            (String(value), json)
        }
        switch self {
        case .bool:
            let value = try Bool(payloadBytes: payload)
            return (value ? "true" : "false", value)
        case .int32:
            let value = try Int32(payloadBytes: payload)
            return number(value, Int(value))
        case .uint32:
            let value = try UInt32(payloadBytes: payload)
            return number(value, Int(value))
        case .int64:
            let value = try Int64(payloadBytes: payload)
            return number(value, Int(value))
        case .uint64:
            let value = try UInt64(payloadBytes: payload)
            return number(value, value)
        case .float:
            let value = try Float(payloadBytes: payload)
            return number(value, Double(value))
        case .double:
            let value = try Double(payloadBytes: payload)
            return number(value, value)
        case .string:
            let value = try String(payloadBytes: payload)
            return (value, value)
        case .bytes:
            let hex = Hex.encode(try [UInt8](payloadBytes: payload))
            return (hex, hex)
        case .strings:
            let items = try [String](payloadBytes: payload)
            return (items.joined(separator: ","), items)
        case .payload:
            let hex = Hex.encode(payload)
            return (hex, hex)
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
