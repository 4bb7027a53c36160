import Foundation
import MappedKVFormat

// Native payloads for `UUID` and `URL` (docs/FORMAT.md 2.5). MMKV has no type for either, so each is
// stored as the MMKV string an app on another platform would most likely have written and will
// read back: a UUID as its canonical 36-character text, a URL as its absolute string. Reading is
// strict: a string that does not parse as the type throws, so a key holding other text is a
// mismatch, not a value.

extension UUID: PayloadCodable {
    /// An MMKV string of the canonical lowercase text (`8-4-4-4-12` hex digits, RFC 9562), the form
    /// Java, Kotlin, Python, Go and JavaScript print, so `decodeString` + `UUID.fromString` (or
    /// the like) reads it elsewhere.
    public func encodePayload(into bytes: inout [UInt8]) {
        uuidString.lowercased().encodePayload(into: &bytes)
    }

    /// An MMKV string holding a UUID's 36-character text, in either case.
    public init(payload: UnsafeRawBufferPointer) throws(FormatError) {
        let text = try String(payload: payload)
        guard text.utf8.count == 36, let uuid = UUID(uuidString: text) else {
            throw .payloadMismatch(
                expected: "a UUID (a string of 36 characters)",
                found: "a string of \(text.utf8.count) bytes that is not a UUID")
        }
        self = uuid
    }
}

extension URL: PayloadCodable {
    /// An MMKV string of `absoluteString`. A relative URL is stored resolved against its base, so it
    /// reads back as the equal absolute URL, without a `baseURL`.
    public func encodePayload(into bytes: inout [UInt8]) {
        absoluteString.encodePayload(into: &bytes)
    }

    /// An MMKV string that parses as a URL as it is (no invalid characters to percent-encode).
    public init(payload: UnsafeRawBufferPointer) throws(FormatError) {
        let text = try String(payload: payload)
        guard let url = URL(string: text, encodingInvalidCharacters: false) else {
            throw .payloadMismatch(
                expected: "a URL (a string)", found: "a string of \(text.utf8.count) bytes that is not a URL")
        }
        self = url
    }
}
