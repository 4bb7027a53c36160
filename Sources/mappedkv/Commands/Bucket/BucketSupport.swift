import ArgumentParser
import Foundation
import Logging
import MappedKV
import MappedKVCollections

// What the `bucket` commands share: opening the collection store, the exit statuses of collection
// errors, and the JSON line of an entry, which `get`, `query` and `export` print and `import` reads.

extension StoreOptions {
    /// Opens the store as a collection store; a missing store is created only with `create`.
    func openCollections(readOnly: Bool, create: Bool = false) throws -> CollectionStore {
        access.noteLockWithoutMultiProcess()
        return try reportingCollectionErrors(suggestingCreate: !readOnly) {
            try CollectionStore(
                id: id, directory: root,
                configuration: Configuration(
                    isReadOnly: readOnly, isMultiProcess: multiProcess, cryptKey: try resolvedKey(),
                    recoveryHandler: { _ in .fail }, createsIfMissing: create, processLock: lock,
                    usesIndexFile: !access.noIndexFile),
                logger: access.logger)
        }
    }
}

/// Runs `body`, turning a collection or store error into a message and its exit status.
@discardableResult
func reportingCollectionErrors<T>(suggestingCreate: Bool = false, _ body: () throws -> T) throws -> T {
    do {
        return try body()
    } catch let error as CollectionError {
        if case .store(let storeError) = error {
            return try reportingErrors(suggestingCreate: suggestingCreate) { throw storeError }
        }
        throw fail(.failure, error.description)
    }
}

/// The bucket commands' values are JSON documents, kept as their normalized bytes (keys sorted).
enum BucketJSON {
    static let options: JSONSerialization.WritingOptions = [.sortedKeys, .withoutEscapingSlashes, .fragmentsAllowed]

    /// `text` as normalized JSON bytes, or nil if it is not JSON.
    static func normalized(_ text: String) -> [UInt8]? {
        guard let object = try? JSONSerialization.jsonObject(with: Data(text.utf8), options: [.fragmentsAllowed]),
            let data = try? JSONSerialization.data(withJSONObject: object, options: options)
        else { return nil }
        return [UInt8](data)
    }

    /// A JSON string literal.
    static func string(_ text: String) -> String {
        (try? JSONSerialization.data(withJSONObject: text, options: options)).map {
            String(decoding: $0, as: UTF8.self)
        }
            ?? "\"\""
    }

    /// A date as an ISO 8601 string to the millisecond, computed from whole milliseconds so that
    /// printing and parsing never round a time to its neighbour.
    static func date(_ date: Date) -> String {
        let milliseconds = Int64((date.timeIntervalSince1970 * 1000).rounded())
        let (seconds, fraction) = milliseconds.quotientAndRemainder(dividingBy: 1000)
        let whole = fraction < 0 ? (seconds - 1, fraction + 1000) : (seconds, fraction)
        let text = Date(timeIntervalSince1970: Double(whole.0)).formatted(Date.ISO8601FormatStyle())
        let digits = String(whole.1)
        return string(String(text.dropLast()) + "." + String(repeating: "0", count: 3 - digits.count) + digits + "Z")
    }

    /// One metadata value as JSON: dates as ISO 8601 strings, doubles always with a fraction or
    /// exponent (so that `import` reads them back as doubles, not integers), bytes as
    /// `{"base64":..}` (so that `import` reads them back as bytes, not a string).
    static func metadata(_ value: MetadataValue) -> String {
        switch value {
        case .string(let text): return string(text)
        case .int(let number): return String(number)
        case .double(let number):
            guard number.isFinite else { return "null" }
            let text = String(number)
            return text.contains(where: { $0 == "." || $0 == "e" || $0 == "E" }) ? text : text + ".0"
        case .date(let date): return self.date(date)
        case .bytes(let bytes): return "{\"base64\":" + string(Data(bytes).base64EncodedString()) + "}"
        }
    }

    /// The line `get`, `query` and `export` print for an entry.
    static func line(_ entry: Entry<[UInt8]>) -> String {
        let meta = entry.metadata.sorted { $0.key.utf8.lexicographicallyPrecedes($1.key.utf8) }
            .map { string($0.key) + ":" + metadata($0.value) }.joined(separator: ",")
        return "{\"bucket\":\(string(entry.bucket)),\"key\":\(string(entry.key)),"
            + "\"value\":\(String(decoding: entry.value, as: UTF8.self)),\"meta\":{\(meta)},"
            + "\"created\":\(date(entry.created)),\"modified\":\(date(entry.modified))}"
    }

    /// A metadata value from its command-line text: an integer, a number with a fraction or
    /// exponent, an ISO 8601 date, or otherwise a string.
    static func metadata(text: String) -> MetadataValue {
        if let number = Int64(text) { return .int(number) }
        if let number = Double(text), text.contains(where: { $0 == "." || $0 == "e" || $0 == "E" }) {
            return .double(number)
        }
        if let date = parseDate(text) { return .date(date) }
        return .string(text)
    }

    /// An ISO 8601 date; a fraction of a second is read to the millisecond exactly.
    static func parseDate(_ text: String) -> Date? {
        guard let dot = text.firstIndex(of: "."), text.hasSuffix("Z") else {
            return try? Date.ISO8601FormatStyle().parse(text)
        }
        let digits = text[text.index(after: dot)..<text.index(before: text.endIndex)]
        guard !digits.isEmpty, digits.allSatisfy(\.isASCII), digits.allSatisfy(\.isNumber),
            let whole = try? Date.ISO8601FormatStyle().parse(String(text[..<dot]) + "Z"),
            let milliseconds = Int64(String(digits.prefix(3)).padding(toLength: 3, withPad: "0", startingAt: 0))
        else { return nil }
        return Date(timeIntervalSince1970: (whole.timeIntervalSince1970 * 1000 + Double(milliseconds)) / 1000)
    }

    /// The entry of one line as `get` prints it.
    static func entry(fromLine line: Substring, number: Int) throws -> Entry<[UInt8]> {
        func bad(_ message: String) -> ExitCode {
            fail(.failure, "line \(number): \(message); nothing more was imported")
        }
        let data = Data(line.utf8)
        guard let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any] else {
            throw bad("not a JSON object")
        }
        guard let bucket = object["bucket"] as? String, let key = object["key"] as? String else {
            throw bad("no \"bucket\" and \"key\" strings")
        }
        guard let value = object["value"],
            let bytes = try? JSONSerialization.data(withJSONObject: value, options: options)
        else { throw bad("no \"value\"") }
        var metadata: [String: MetadataValue] = [:]
        if let meta = object["meta"] as? [String: Any] {
            for (name, item) in meta {
                // JSONSerialization keeps 1 (an integer) apart from 1.0 (a double) in the number's type.
                if let object = item as? [String: Any] {
                    guard object.count == 1, let text = object["base64"] as? String,
                        let data = Data(base64Encoded: text)
                    else { throw bad("meta \(name) is an object other than {\"base64\": BASE64}") }
                    metadata[name] = .bytes([UInt8](data))
                } else if let text = item as? String {
                    metadata[name] = parseDate(text).map(MetadataValue.date) ?? .string(text)
                } else if let number = item as? NSNumber, case let kind = String(cString: number.objCType), kind != "c"
                {
                    // "c" is a boolean; "d" and "f" are doubles; the rest are integers.
                    metadata[name] = kind == "d" || kind == "f" ? .double(number.doubleValue) : .int(number.int64Value)
                } else {
                    throw bad("meta \(name) is not a string, a number or {\"base64\": BASE64}")
                }
            }
        }
        let now = Date()
        let created = (object["created"] as? String).flatMap(parseDate) ?? now
        let modified = (object["modified"] as? String).flatMap(parseDate) ?? now
        return Entry(
            bucket: bucket, key: key, value: [UInt8](bytes), metadata: metadata, created: created, modified: modified)
    }
}
