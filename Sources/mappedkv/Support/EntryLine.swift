import Foundation
import MappedKV
import MappedKVFormat

/// One line of `export` and `import`: a JSON object per key.
///
/// `export` writes `{"key": K, "payload": HEX}`, plus `"expiresAt": SECONDS` (since 1970; 0 is
/// never) when the store has key expiry on, plus `"type": "string", "value": TEXT` when the
/// payload reads as a string. MMKV files record no types, so the type is inferred and only
/// for strings; the payload is exact, and `import` restores it byte for byte.
///
/// `import` takes the same lines, or hand-written ones with `"type"` (a `--type` name) and
/// `"value"` instead of `"payload"`: `{"key": "n", "type": "int32", "value": 5}`.
enum EntryLine {
    /// The line for `entry`.
    static func encode(_ entry: StoreEntry) throws -> String {
        var object: [String: Any] = ["key": entry.key, "payload": Hex.encode(entry.payload)]
        if let expiresAt = entry.expiresAt { object["expiresAt"] = Int(expiresAt) }
        // Text with control characters (other than tab and line breaks) is more likely a list
        // of strings or a number that happens to decode: no type is given for it.
        if let text = try? ValueType.string.text(fromPayload: entry.payload),
            !text.unicodeScalars.contains(where: { $0.value < 0x20 && !"\t\n\r".unicodeScalars.contains($0) })
        {
            object["type"] = ValueType.string.rawValue
            object["value"] = text
        }
        return try JSONOutput.line(object)
    }

    /// The entry of line `number`, or nil for a blank line.
    static func decode(_ line: Substring, number: Int) throws(EntryLineError) -> StoreEntry? {
        guard line.contains(where: { !$0.isWhitespace }) else { return nil }
        let parsed: Any
        do {
            parsed = try JSONSerialization.jsonObject(with: Data(line.utf8), options: [])
        } catch {
            throw EntryLineError(line: number, message: "not JSON")
        }
        guard let object = parsed as? [String: Any] else {
            throw EntryLineError(line: number, message: "not a JSON object")
        }
        guard let key = object["key"] as? String, !key.isEmpty else {
            throw EntryLineError(line: number, message: "no \"key\" string")
        }
        return StoreEntry(
            key: key, payload: try payload(of: object, key: key, line: number),
            expiresAt: try expiry(of: object, line: number))
    }

    private static func payload(of object: [String: Any], key: String, line: Int) throws(EntryLineError) -> [UInt8] {
        if let hex = object["payload"] {
            guard let text = hex as? String, let bytes = Hex.decode(text), !bytes.isEmpty else {
                throw EntryLineError(line: line, message: "\"payload\" of '\(key)' is not non-empty hex")
            }
            return bytes
        }
        guard let name = object["type"] as? String, let type = ValueType(rawValue: name) else {
            throw EntryLineError(
                line: line, message: "'\(key)' needs \"payload\" (hex) or \"type\" (\(ValueType.names)) and \"value\"")
        }
        guard let value = object["value"], let bytes = type.payload(fromJSON: value) else {
            throw EntryLineError(line: line, message: "\"value\" of '\(key)' is not a valid \(name)")
        }
        return bytes
    }

    private static func expiry(of object: [String: Any], line: Int) throws(EntryLineError) -> UInt32? {
        guard let value = object["expiresAt"] else { return nil }
        guard let number = value as? NSNumber, case let seconds = number.doubleValue, seconds >= 0,
            seconds <= Double(UInt32.max), seconds == seconds.rounded()
        else {
            throw EntryLineError(line: line, message: "\"expiresAt\" is not whole seconds since 1970 (0 to 4294967295)")
        }
        return UInt32(seconds)
    }
}

/// A line `import` cannot use: nothing is written.
struct EntryLineError: Error, CustomStringConvertible {
    var line: Int
    var message: String
    var description: String { "line \(line): \(message); nothing was imported" }
}
