import Foundation
import MappedKVFormat
import Testing

@testable import MappedKV

/// Reading a key as a type it was not written as: every type is written, then read as every type.
/// Either the read is refused with `valueDecodingFailed` (the bytes cannot be that type), or the
/// bytes are a valid encoding of the read type too, which no reader can detect since the format has
/// no type tags: those pairs are listed here and in docs/FORMAT.md 2.5, and asserted to read.
@Suite struct TypeMismatchTests {
    enum Kind: String, CaseIterable, Sendable {
        case bool, int32, uint32, int64, uint64, int, float, double, string, bytes, data, strings, date, uuid, url
        case json
    }

    struct JSONValue: Codable, Equatable { var name: String }

    static func write(_ kind: Kind, to store: MappedKV, key: String) throws {
        switch kind {
        case .bool: try store.set(true, forKey: key)
        case .int32: try store.set(Int32(-42), forKey: key)
        case .uint32: try store.set(UInt32(300), forKey: key)
        case .int64: try store.set(Int64(-9_000_000_000), forKey: key)
        case .uint64: try store.set(UInt64(1) << 40, forKey: key)
        case .int: try store.set(7, forKey: key)
        case .float: try store.set(Float(1.5), forKey: key)
        case .double: try store.set(2.25, forKey: key)
        case .string: try store.set("hello", forKey: key)
        case .bytes: try store.set([UInt8]([1, 2, 3]), forKey: key)
        case .data: try store.set(Data([0xFF]), forKey: key)
        case .strings: try store.set(["a", "bc"], forKey: key)
        case .date: try store.set(Date(timeIntervalSince1970: 1_700_000_000.25), forKey: key)
        case .uuid: try store.set(UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")!, forKey: key)
        case .url: try store.set(URL(string: "https://example.com/a")!, forKey: key)
        case .json: try store.set(JSONValue(name: "svc"), forKey: key)
        }
    }

    static func read(_ kind: Kind, from store: MappedKV, key: String) throws(MappedKVError) {
        switch kind {
        case .bool: _ = try store.bool(forKey: key)
        case .int32: _ = try store.int32(forKey: key)
        case .uint32: _ = try store.uint32(forKey: key)
        case .int64: _ = try store.int64(forKey: key)
        case .uint64: _ = try store.uint64(forKey: key)
        case .int: _ = try store.int(forKey: key)
        case .float: _ = try store.float(forKey: key)
        case .double: _ = try store.double(forKey: key)
        case .string: _ = try store.string(forKey: key)
        case .bytes: _ = try store.bytes(forKey: key)
        case .data: _ = try store.data(forKey: key)
        case .strings: _ = try store.strings(forKey: key)
        case .date: _ = try store.date(forKey: key)
        case .uuid: _ = try store.value(forKey: key, as: UUID.self)
        case .url: _ = try store.value(forKey: key, as: URL.self)
        case .json: _ = try store.value(forKey: key, as: JSONValue.self)
        }
    }

    /// Written kind -> the other kinds its bytes also decode as (undetectable, see docs/FORMAT.md 2.5).
    static let undetectable: [Kind: Set<Kind>] = [
        // Small non-negative varints are every integer type's encoding; `01` is also a Bool.
        .bool: [.int32, .uint32, .int64, .uint64, .int],
        .int: [.int32, .uint32, .int64, .uint64],
        .uint32: [.int32, .int64, .uint64, .int],
        // A negative int32 is sign-extended, so it is the same int64.
        .int32: [.int64, .uint64, .int],
        .int64: [.uint64, .int],
        .uint64: [.int64, .int],
        .float: [],
        // A Date is a Double (MMKV's NSDate encoding).
        .double: [.date],
        .date: [.double],
        // Strings, bytes and JSON share MMKV's length-delimited encoding; `03 01 02 03` is also 4 bytes.
        .string: [.bytes, .data, .url],
        .bytes: [.string, .data, .float],
        .data: [.bytes],
        .strings: [.string, .bytes, .data],
        .uuid: [.string, .bytes, .data, .url],
        .url: [.string, .bytes, .data],
        .json: [.string, .bytes, .data],
    ]

    @Test("each type written, each other type read: refused with valueDecodingFailed, or undetectable")
    func everyPairIsRefusedOrDocumented() throws {
        let dir = TemporaryDirectory("mismatch")
        let store = try MappedKV(id: "s", directory: dir.path)
        for written in Kind.allCases { try Self.write(written, to: store, key: written.rawValue) }
        for written in Kind.allCases {
            let readable = (Self.undetectable[written] ?? []).union([written])
            for readAs in Kind.allCases {
                let pair = "\(written) read as \(readAs)"
                if readable.contains(readAs) {
                    #expect(throws: Never.self, "\(pair) is documented as undetectable") {
                        try Self.read(readAs, from: store, key: written.rawValue)
                    }
                } else {
                    let error = #expect(throws: MappedKVError.self, "\(pair) must be refused") {
                        try Self.read(readAs, from: store, key: written.rawValue)
                    }
                    if let error {
                        guard case .valueDecodingFailed(let key, _, _) = error else {
                            Issue.record("\(pair) threw \(error), not valueDecodingFailed")
                            continue
                        }
                        #expect(key == written.rawValue)
                    }
                }
            }
        }
    }

    @Test("the mismatch error names the key, the type and what was found")
    func theErrorSaysWhatWasFound() throws {
        let dir = TemporaryDirectory("mismatch-error")
        let store = try MappedKV(id: "s", directory: dir.path)
        try store.set(Float(1.5), forKey: "ratio")
        #expect(
            throws: MappedKVError.valueDecodingFailed(
                key: "ratio", type: "Double",
                reason: FormatError.payloadMismatch(expected: "a Double (8 bytes)", found: "4 bytes").description)
        ) { _ = try store.double(forKey: "ratio") }
        try store.set(Int64(1) << 40, forKey: "big")
        #expect(throws: MappedKVError.self) { _ = try store.int32(forKey: "big", default: 0) }
        #expect(throws: MappedKVError.self, "a default never hides a wrong type") {
            _ = try store.value(forKey: "big", default: UUID())
        }
    }

    @Test("strict decoding still reads what MMKV 2.4.2 wrote, as the type it was written as")
    func mmkvWrittenValuesStillRead() throws {
        let dir = TemporaryDirectory("mismatch-golden")
        try copyGoldenStore("a_plain", to: dir)
        let store = try MappedKV(id: "case_a", directory: dir.path, configuration: Configuration(isReadOnly: true))
        #expect(try store.bool(forKey: "b") == true)
        #expect(try store.int32(forKey: "i32") != nil)
        #expect(try store.uint32(forKey: "u32") != nil)
        #expect(try store.int64(forKey: "i64") != nil)
        #expect(try store.uint64(forKey: "u64") == .max)
        #expect(try store.double(forKey: "d") != nil)
        #expect(try store.float(forKey: "f") == 1.5)
        #expect(try store.string(forKey: "s") == "hello, MMKV ✓")
        #expect(try store.bytes(forKey: "by") != nil)
        #expect(throws: MappedKVError.self) { _ = try store.bool(forKey: "u64") }
        #expect(throws: MappedKVError.self) { _ = try store.uint32(forKey: "i32") }
    }
}
