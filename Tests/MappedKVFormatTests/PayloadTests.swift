import MappedKVFormat
import Testing

/// One line of `payloads.txt`.
struct PayloadVector: Sendable, CustomTestStringConvertible {
    enum Value: Sendable {
        case bool(Bool)
        case int32(Int32)
        case uint32(UInt32)
        case int64(Int64)
        case uint64(UInt64)
        case int(Int)
        case float(Float)
        case double(Double)
        case string(String)
        case bytes([UInt8])
        case strings([String])
    }

    var type: String
    var text: String
    var value: Value
    var payload: [UInt8]

    var testDescription: String {
        "\(type) \(text.count > 24 ? String(text.prefix(24)) + "…" : text)"
    }

    static func parse(_ row: [String]) -> PayloadVector? {
        guard row.count == 3, let payload = try? [UInt8](hex: row[2]) else { return nil }
        let text = row[1]
        let value: Value?
        switch row[0] {
        case "bool": value = text == "true" ? .bool(true) : text == "false" ? .bool(false) : nil
        case "int32": value = Int32(text).map(Value.int32)
        case "uint32": value = UInt32(text).map(Value.uint32)
        case "int64": value = Int64(text).map(Value.int64)
        case "uint64": value = UInt64(text).map(Value.uint64)
        case "int": value = Int(text).map(Value.int)
        case "float": value = Float(text).map(Value.float)
        case "double": value = Double(text).map(Value.double)
        case "string": value = (try? QuotedString.string(text)).map(Value.string)
        case "bytes": value = (try? [UInt8](hex: text)).map(Value.bytes)
        case "strings": value = (try? QuotedString.list(text)).map(Value.strings)
        default: value = nil
        }
        return value.map { PayloadVector(type: row[0], text: text, value: $0, payload: payload) }
    }

    static let all: [PayloadVector] = VectorFiles.rowsOrEmpty("payloads.txt").compactMap(parse)

    /// The value's encoding through the code under test.
    var encoded: [UInt8] {
        switch value {
        case .bool(let v): return v.payloadBytes
        case .int32(let v): return v.payloadBytes
        case .uint32(let v): return v.payloadBytes
        case .int64(let v): return v.payloadBytes
        case .uint64(let v): return v.payloadBytes
        case .int(let v): return v.payloadBytes
        case .float(let v): return v.payloadBytes
        case .double(let v): return v.payloadBytes
        case .string(let v): return v.payloadBytes
        case .bytes(let v): return v.payloadBytes
        case .strings(let v): return v.payloadBytes
        }
    }

    /// What the value's in-place writer produces: its ``PayloadCodable/directPayloadLength`` and
    /// the bytes ``PayloadCodable/writePayload(to:)`` wrote, found by filling a buffer with a
    /// marker first (so a write past the payload shows up as a changed byte after it).
    var writtenInPlace: (directLength: Int?, bytes: [UInt8], untouchedAfter: Bool) {
        func write(_ value: some PayloadCodable) -> (Int?, [UInt8], Bool) {
            let length = payload.count
            var buffer = [UInt8](repeating: 0xA5, count: length + 16)
            buffer.withUnsafeMutableBytes { value.writePayload(to: $0.baseAddress!) }
            return (
                value.directPayloadLength, Array(buffer.prefix(length)),
                buffer.dropFirst(length).allSatisfy { $0 == 0xA5 }
            )
        }
        switch value {
        case .bool(let v): return write(v)
        case .int32(let v): return write(v)
        case .uint32(let v): return write(v)
        case .int64(let v): return write(v)
        case .uint64(let v): return write(v)
        case .int(let v): return write(v)
        case .float(let v): return write(v)
        case .double(let v): return write(v)
        case .string(let v): return write(v)
        case .bytes(let v): return write(v)
        case .strings(let v): return write(v)
        }
    }

    /// Decodes `bytes` as this vector's type and says whether the result equals the vector's value
    /// (floating-point values compare by bit pattern).
    func decodesToValue(_ bytes: [UInt8]) throws -> Bool {
        switch value {
        case .bool(let v): return try Bool(payload: bytes) == v
        case .int32(let v): return try Int32(payload: bytes) == v
        case .uint32(let v): return try UInt32(payload: bytes) == v
        case .int64(let v): return try Int64(payload: bytes) == v
        case .uint64(let v): return try UInt64(payload: bytes) == v
        case .int(let v): return try Int(payload: bytes) == v
        case .float(let v): return try Float(payload: bytes).bitPattern == v.bitPattern
        case .double(let v): return try Double(payload: bytes).bitPattern == v.bitPattern
        case .string(let v): return try String(payload: bytes) == v
        case .bytes(let v): return try [UInt8](payload: bytes) == v
        case .strings(let v): return try [String](payload: bytes) == v
        }
    }

    /// Decodes `bytes` as this vector's type, discarding the result.
    func decode(_ bytes: [UInt8]) throws {
        _ = try decodesToValue(bytes)
    }

    /// Whether the type reads to the end of the payload (string vectors), so trailing bytes matter.
    var readsToEnd: Bool { type == "strings" }
}

@Suite("Value payloads")
struct PayloadTests {
    @Test("the vector file parses and covers every type and the required cases")
    func vectorFileIsComplete() throws {
        let rows = try VectorFiles.rows("payloads.txt")
        #expect(rows.count == PayloadVector.all.count, "every row of payloads.txt must parse")
        let types = Set(PayloadVector.all.map(\.type))
        for type in [
            "bool", "int32", "uint32", "int64", "uint64", "int", "float", "double", "string", "bytes", "strings",
        ] {
            #expect(types.contains(type), "payloads.txt has no \(type) vector")
        }
        func has(_ type: String, _ text: String, _ hex: String) -> Bool {
            PayloadVector.all.contains { $0.type == type && $0.text == text && $0.payload.hex == hex }
        }
        #expect(has("int32", "-1", "ffffffffffffffffff01"))
        #expect(has("int32", "-42", "d6ffffffffffffffff01"))
        #expect(has("int32", "0", "00"))
        #expect(has("int32", "-2147483648", "80808080f8ffffffff01"))
        #expect(has("int32", "2147483647", "ffffffff07"))
        #expect(has("uint64", "18446744073709551615", "ffffffffffffffffff01"))
        #expect(has("string", "\"\"", "00"))
        #expect(has("bytes", "-", "00"))
        #expect(has("strings", "[]", "00"))
        #expect(has("strings", "[\"a\",\"bc\"]", "050161026263"))
        #expect(PayloadVector.all.contains { $0.type == "string" && $0.text.utf8.contains { $0 >= 0x80 } })
    }

    @Test("encodes to the expected bytes", arguments: PayloadVector.all)
    func encodes(_ vector: PayloadVector) {
        #expect(vector.encoded == vector.payload, "got \(vector.encoded.hex), expected \(vector.payload.hex)")
    }

    @Test("writes in place exactly the bytes it encodes, and no more", arguments: PayloadVector.all)
    func writesInPlace(_ vector: PayloadVector) {
        let written = vector.writtenInPlace
        // Numbers and strings know their length without encoding; byte arrays and string vectors
        // take the default, which encodes and copies.
        let knowsLength = vector.type != "bytes" && vector.type != "strings"
        #expect(written.directLength == (knowsLength ? vector.payload.count : nil))
        #expect(written.bytes == vector.payload, "got \(written.bytes.hex), expected \(vector.payload.hex)")
        #expect(written.untouchedAfter, "wrote past the payload")
    }

    @Test("small (inline) and large strings, from UTF-8 or UTF-16, write in place what they encode")
    func stringsWriteInPlace() {
        // Up to 15 UTF-8 bytes a string is stored inline; longer ones in a buffer of their own.
        let strings = [
            "", "é", "fifteen bytes!!", "sixteen bytes!!!", String(repeating: "ß", count: 70),
            String(decoding: Array("日本語のキー".utf16), as: UTF16.self),
        ]
        for string in strings {
            var buffer = [UInt8](repeating: 0, count: string.payloadBytes.count)
            buffer.withUnsafeMutableBytes { string.writePayload(to: $0.baseAddress!) }
            #expect(string.directPayloadLength == string.payloadBytes.count)
            #expect(buffer == string.payloadBytes, "\(string)")
        }
    }

    @Test("decodes the expected bytes back to the value", arguments: PayloadVector.all)
    func decodes(_ vector: PayloadVector) throws {
        #expect(try vector.decodesToValue(vector.payload))
    }

    @Test("decoding refuses trailing bytes", arguments: PayloadVector.all)
    func refusesTrailingBytes(_ vector: PayloadVector) throws {
        // Strict: a payload holds exactly one value. (An expire-mode value's 4-byte suffix is cut off
        // by the store before decoding, so it never reaches a decoder.)
        #expect(throws: FormatError.self) { try vector.decode(vector.payload + [0x10, 0x20, 0x30, 0x40]) }
        #expect(throws: FormatError.self) { try vector.decode(vector.payload + [0x00]) }
        #expect(throws: FormatError.self) { try vector.decode(vector.payload + [0xFF]) }
    }

    @Test("every strict prefix of a payload throws", arguments: PayloadVector.all.filter { !$0.readsToEnd })
    func truncatedThrows(_ vector: PayloadVector) {
        for length in 0..<vector.payload.count {
            let prefix = Array(vector.payload.prefix(length))
            #expect(throws: FormatError.self, "prefix \(prefix.hex)") { try vector.decode(prefix) }
        }
    }

    @Test("truncated or empty string vectors throw")
    func truncatedStringVectors() {
        #expect(throws: FormatError.self) { try [String](payload: []) }
        #expect(throws: FormatError.self) { try [String](payload: [0x80]) }
        #expect(throws: FormatError.self) { try [String](payload: [0x05, 0x01]) }
        #expect(throws: FormatError.self) { try [String](payload: [0x05, 0x01, 0x61, 0x02, 0x62]) }
        #expect(throws: FormatError.self) { try [String](payload: [0x05, 0x01, 0x61, 0x80]) }
    }

    @Test("a string vector's total length must be exactly the rest of the payload")
    func stringVectorTotalMustMatch() throws {
        #expect(try [String](payload: [0x05, 0x01, 0x61, 0x02, 0x62, 0x63]) == ["a", "bc"])
        #expect(try [String](payload: [0x00]) == [])
        // MMKV's decodeOneVector skips the total; MMKV never writes a wrong one, so it is a mismatch here.
        #expect(throws: FormatError.self) { try [String](payload: [0x00, 0x01, 0x61, 0x02, 0x62, 0x63]) }
        #expect(throws: FormatError.self) { try [String](payload: [0x7F, 0x01, 0x61]) }
        #expect(throws: FormatError.self) { try [String](payload: [0x05]) }
        #expect(throws: FormatError.self) { try [String](payload: [0x02, 0x01, 0x61, 0x00]) }
    }

    @Test("int32 accepts the 5-byte form that drops the upper 32 bits")
    func int32FiveByteForm() throws {
        #expect(try Int32(payload: [0xFF, 0xFF, 0xFF, 0xFF, 0x0F]) == -1)
        #expect(try Int32(payload: [0xD6, 0xFF, 0xFF, 0xFF, 0x0F]) == -42)
        #expect(try Int32(payload: [0x80, 0x80, 0x80, 0x80, 0x08]) == Int32.min)
        #expect(try Int32(payload: [0xFF, 0xFF, 0xFF, 0xFF, 0x07]) == Int32.max)
        #expect(try UInt32(payload: [0xFF, 0xFF, 0xFF, 0xFF, 0x0F]) == UInt32.max)
        // A sign-extended negative int32 is no UInt32 (MMKV's getUInt32 would return its low 32 bits).
        #expect(throws: FormatError.self) { try UInt32(payload: Int32(-1).payloadBytes) }
    }

    @Test("reading a 10-byte negative int32 as int64 gives the sign-extended value")
    func int32AsInt64() throws {
        for value: Int32 in [-1, -2, -42, Int32.min] {
            #expect(try Int64(payload: value.payloadBytes) == Int64(value))
            #expect(try Int(payload: value.payloadBytes) == Int(value))
        }
        // The other way round, an int64 in Int32's range reads (the bytes are the same); one outside it
        // is a mismatch (MMKV's getInt32 would keep the low 32 bits).
        #expect(try Int32(payload: Int64(-5).payloadBytes) == -5)
        #expect(throws: FormatError.self) { try Int32(payload: Int64(-9_000_000_000).payloadBytes) }
        #expect(throws: FormatError.self) { try Int32(payload: UInt64(1 << 32 | 7).payloadBytes) }
        #expect(throws: FormatError.self) { try Int32(payload: (Int64(Int32.min) - 1).payloadBytes) }
    }

    @Test("bool is one varint of value 0 or 1")
    func boolIsZeroOrOne() throws {
        #expect(try Bool(payload: [0x00]) == false)
        #expect(try Bool(payload: [0x01]) == true)
        #expect(try Bool(payload: [0x80, 0x00]) == false, "a non-minimal varint still holds one value")
        // MMKV's readBool tests any varint against zero; no MMKV writer stores these as a bool.
        #expect(throws: FormatError.payloadMismatch(expected: "a Bool (one byte, 00 or 01)", found: "2")) {
            try Bool(payload: [0x02])
        }
        #expect(throws: FormatError.self) { try Bool(payload: [0x80, 0x80, 0x80, 0x80, 0x10]) }
        #expect(throws: FormatError.self) { try Bool(payload: [0x01, 0x00]) }
        #expect(throws: FormatError.emptyPayload) { try Bool(payload: []) }
    }

    @Test("a varint payload wider than 64 bits is refused; one of exactly 64 bits reads")
    func varintWiderThan64Bits() throws {
        let max64: [UInt8] = Array(repeating: 0xFF, count: 9) + [0x01]
        #expect(try UInt64(payload: max64) == .max)
        #expect(try Int64(payload: max64) == -1)
        let wider: [UInt8] = Array(repeating: 0xFF, count: 9) + [0x7F]
        #expect(
            throws: FormatError.payloadMismatch(expected: "a UInt64 (a varint)", found: "a varint wider than 64 bits")
        ) {
            try UInt64(payload: wider)
        }
        #expect(
            throws: FormatError.payloadMismatch(expected: "an Int64 (a varint)", found: "a varint wider than 64 bits")
        ) {
            try Int64(payload: wider)
        }
    }

    @Test("fixed-width and length-delimited payloads must have exactly their length")
    func exactLengths() throws {
        #expect(throws: FormatError.payloadMismatch(expected: "a Double (8 bytes)", found: "4 bytes")) {
            try Double(payload: Float(1.5).payloadBytes)
        }
        #expect(throws: FormatError.payloadMismatch(expected: "a Float (4 bytes)", found: "8 bytes")) {
            try Float(payload: Double(2.25).payloadBytes)
        }
        #expect(throws: FormatError.payloadMismatch(expected: "a Double (8 bytes)", found: "1 bytes")) {
            try Double(payload: [0x01])
        }
        // An inner length shorter than the payload.
        #expect(
            throws: FormatError.payloadMismatch(
                expected: "a String (varint(n) + n UTF-8 bytes)", found: "an inner length of 1 with 2 bytes after it")
        ) { try String(payload: [0x01, 0x61, 0x62]) }
        #expect(throws: FormatError.self) { try [UInt8](payload: [0x01, 0x61, 0x62]) }
    }

    @Test("empty payloads throw for every non-length-prefixed type")
    func emptyPayloads() {
        #expect(throws: FormatError.emptyPayload) { try Int32(payload: []) }
        #expect(throws: FormatError.emptyPayload) { try UInt32(payload: []) }
        #expect(throws: FormatError.emptyPayload) { try Int64(payload: []) }
        #expect(throws: FormatError.emptyPayload) { try UInt64(payload: []) }
        #expect(throws: FormatError.emptyPayload) { try Int(payload: []) }
        #expect(throws: FormatError.self) { try Float(payload: []) }
        #expect(throws: FormatError.self) { try Double(payload: []) }
        #expect(throws: FormatError.self) { try String(payload: []) }
        #expect(throws: FormatError.self) { try [UInt8](payload: []) }
    }

    @Test("a string payload that is not valid UTF-8 throws .invalidUTF8")
    func invalidUTF8() throws {
        let bad: [[UInt8]] = [
            [0x01, 0xFF],  // never valid
            [0x01, 0x80],  // lone continuation byte
            [0x02, 0xC3, 0x28],  // bad continuation
            [0x02, 0xC0, 0x80],  // overlong NUL
            [0x03, 0xED, 0xA0, 0x80],  // UTF-16 surrogate
            [0x04, 0xF4, 0x90, 0x80, 0x80],  // above U+10FFFF
            [0x02, 0x61, 0xE2],  // truncated sequence inside the declared length
        ]
        for payload in bad {
            #expect(throws: FormatError.invalidUTF8, "\(payload.hex)") { try String(payload: payload) }
            #expect(throws: FormatError.invalidUTF8, "\(payload.hex)") {
                try [String](payload: [UInt8(payload.count)] + payload)
            }
        }
        // The same bytes are fine as a bytes payload.
        #expect(try [UInt8](payload: [0x01, 0xFF]) == [0xFF])
    }

    @Test("string and bytes payloads whose length is negative as int32 or past the end throw")
    func badInnerLength() {
        #expect(throws: FormatError.invalidLength(offset: 0, length: 5)) { try String(payload: [0x05, 0x61]) }
        #expect(throws: FormatError.invalidLength(offset: 0, length: 0xFFFF_FFFF)) {
            try [UInt8](payload: [0xFF, 0xFF, 0xFF, 0xFF, 0x0F, 0x00])
        }
        #expect(throws: FormatError.self) { try [UInt8](payload: Int64(-1).payloadBytes) }
    }

    @Test("random values round-trip through their payloads")
    func randomRoundTrip() throws {
        var rng = SplitMix64(seed: 0x9A1_0AD5)
        for _ in 0..<2_000 {
            let u = rng.valueOfRandomWidth()
            #expect(try UInt64(payload: u.payloadBytes) == u)
            let magnitude = Int64(bitPattern: rng.valueOfRandomWidth())
            let i = Bool.random(using: &rng) ? 0 &- magnitude : magnitude
            #expect(try Int64(payload: i.payloadBytes) == i)
            let i32 = Int32(truncatingIfNeeded: i)
            #expect(try Int32(payload: i32.payloadBytes) == i32)
            #expect(i32.payloadBytes.count == (i32 < 0 ? 10 : Varint.size(of: UInt64(i32))))
            let u32 = UInt32(truncatingIfNeeded: u)
            #expect(try UInt32(payload: u32.payloadBytes) == u32)
            let f = Float(bitPattern: UInt32(truncatingIfNeeded: rng.next()))
            #expect(try Float(payload: f.payloadBytes).bitPattern == f.bitPattern)
            let d = Double(bitPattern: rng.next())
            #expect(try Double(payload: d.payloadBytes).bitPattern == d.bitPattern)
            let bytes = rng.bytes(count: Int.random(in: 0...300, using: &rng))
            #expect(try [UInt8](payload: bytes.payloadBytes) == bytes)
            let scalars = (0..<Int.random(in: 0...20, using: &rng)).map { _ in
                Character(Unicode.Scalar(UInt32.random(in: 0x20...0x2FFF, using: &rng)) ?? "?")
            }
            let string = String(scalars)
            #expect(try String(payload: string.payloadBytes) == string)
            let strings = (0..<Int.random(in: 0...5, using: &rng)).map { _ in
                String(repeating: "é", count: Int.random(in: 0...70, using: &rng))
            }
            #expect(try [String](payload: strings.payloadBytes) == strings)
        }
    }
}
