import MappedKVFormat
import Testing

struct VarintVector: Sendable, CustomTestStringConvertible {
    var value: UInt64
    var encoding: [UInt8]
    var testDescription: String { "\(value) -> \(encoding.hex)" }

    static let all: [VarintVector] = VectorFiles.rowsOrEmpty("varint.txt").compactMap { row in
        guard row.count == 2, let value = UInt64(row[0]), let encoding = try? [UInt8](hex: row[1]) else { return nil }
        return VarintVector(value: value, encoding: encoding)
    }
}

/// Reads one varint from `bytes` and returns it with the cursor's final position.
private func readVarint(_ bytes: [UInt8], at position: Int = 0) throws(FormatError) -> (UInt64, Int) {
    try bytes.withRawBytes { (raw) throws(FormatError) in
        var cursor = ByteCursor(raw, position: position)
        let value = try cursor.readVarint64()
        return (value, cursor.position)
    }
}

/// The minimal length by the thresholds of docs/FORMAT.md section 0 (1 byte below 2^7, 2 below 2^14, ...).
private func expectedLength(_ value: UInt64) -> Int {
    var length = 1
    while length < 10 && value >= (UInt64(1) << UInt64(7 * length)) { length += 1 }
    return length
}

@Suite("Varint")
struct VarintTests {
    @Test("the vector file parses and covers the required boundaries")
    func vectorFileIsComplete() throws {
        let rows = try VectorFiles.rows("varint.txt")
        #expect(rows.count == VarintVector.all.count, "every row of varint.txt must parse")
        let values = Set(VarintVector.all.map(\.value))
        let required: [UInt64] = [
            0, 1, 127, 128, 16383, 16384, (1 << 21) - 1, 1 << 21, (1 << 28) - 1, 1 << 28,
            UInt64(UInt32.max), 1 << 35, 1 << 63, UInt64.max,
        ]
        for value in required { #expect(values.contains(value), "varint.txt lacks \(value)") }
    }

    @Test("encodes each vector to its minimal bytes", arguments: VarintVector.all)
    func encodes(_ vector: VarintVector) {
        #expect(Varint.encode(vector.value) == vector.encoding)
        var appended: [UInt8] = [0xAA]
        Varint.append(vector.value, to: &appended)
        #expect(appended == [0xAA] + vector.encoding)
        #expect(Varint.size(of: vector.value) == vector.encoding.count)

        var buffer = [UInt8](repeating: 0xEE, count: Varint.maxLength + 2)
        let written = buffer.withUnsafeMutableBytes { Varint.write(vector.value, to: $0.baseAddress! + 1) }
        #expect(written == vector.encoding.count)
        #expect(Array(buffer[1..<(1 + written)]) == vector.encoding)
        #expect(buffer[0] == 0xEE && buffer[1 + written] == 0xEE, "write must not touch other bytes")
    }

    @Test("decodes each vector and stops right after it", arguments: VarintVector.all)
    func decodes(_ vector: VarintVector) throws {
        let (value, end) = try readVarint(vector.encoding + [0x01, 0x80])
        #expect(value == vector.value)
        #expect(end == vector.encoding.count)

        let low = try (vector.encoding + [0x7F]).withRawBytes { (raw) throws(FormatError) in
            var cursor = ByteCursor(raw)
            return try cursor.readVarint32()
        }
        #expect(low == UInt32(truncatingIfNeeded: vector.value), "readVarint32 keeps the low 32 bits")
    }

    @Test("random values round-trip and use the minimal length")
    func randomRoundTrip() throws {
        var rng = SplitMix64(seed: 0x5EED_0001)
        for _ in 0..<20_000 {
            let value = rng.valueOfRandomWidth()
            let encoded = Varint.encode(value)
            #expect(encoded.count == expectedLength(value))
            #expect(Varint.size(of: value) == encoded.count)
            let (decoded, end) = try readVarint(encoded)
            #expect(decoded == value)
            #expect(end == encoded.count)
        }
    }

    @Test("size(of:) switches length exactly at each power of 2^7")
    func sizeBoundaries() {
        #expect(Varint.size(of: 0) == 1)
        for length in 1..<10 {
            let boundary = UInt64(1) << UInt64(7 * length)
            #expect(Varint.size(of: boundary - 1) == length)
            #expect(Varint.size(of: boundary) == length + 1)
        }
        #expect(Varint.size(of: UInt64.max) == Varint.maxLength)
        #expect(Varint.maxLength == 10)
    }

    @Test("encodings are minimal: continuation bits on all but the last byte, no trailing zero group")
    func minimality() {
        var rng = SplitMix64(seed: 0x5EED_0002)
        var values: [UInt64] = [0, 1, 127, 128, UInt64.max]
        for _ in 0..<5_000 { values.append(rng.valueOfRandomWidth()) }
        for value in values {
            let encoded = Varint.encode(value)
            #expect(encoded.dropLast().allSatisfy { $0 & 0x80 != 0 })
            #expect(encoded.last! & 0x80 == 0)
            if encoded.count > 1 { #expect(encoded.last! != 0, "a trailing zero group is not minimal: \(encoded.hex)") }
        }
    }

    @Test("readers accept non-minimal encodings (like a padded holder)")
    func nonMinimalAccepted() throws {
        let cases: [([UInt8], UInt64)] = [
            ([0x80, 0x00], 0),
            ([0x80, 0x80, 0x80, 0x00], 0),
            ([0x81, 0x80, 0x80, 0x80, 0x00], 1),
            ([0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x01], UInt64.max),
            // Ten bytes is the maximum even when the last group is zero.
            ([0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x00], 0),
        ]
        for (bytes, expected) in cases {
            let (value, end) = try readVarint(bytes)
            #expect(value == expected, "\(bytes.hex)")
            #expect(end == bytes.count, "\(bytes.hex)")
        }
    }

    @Test("a truncated varint throws .truncated at its first byte")
    func truncated() {
        #expect(throws: FormatError.truncated(offset: 0)) { try readVarint([]) }
        #expect(throws: FormatError.truncated(offset: 0)) { try readVarint([0x80]) }
        #expect(throws: FormatError.truncated(offset: 0)) { try readVarint([0xFF, 0xFF, 0xFF]) }
        #expect(throws: FormatError.truncated(offset: 2)) { try readVarint([0x00, 0x01, 0x80, 0x80], at: 2) }
        #expect(throws: FormatError.truncated(offset: 3)) { try readVarint([0x00, 0x01, 0x02], at: 3) }
        for length in 1..<10 {
            let bytes = [UInt8](repeating: 0xFF, count: length)
            #expect(throws: FormatError.truncated(offset: 0)) { try readVarint(bytes) }
        }
    }

    @Test("a varint longer than 10 bytes throws .malformedVarint")
    func tooLong() {
        let eleven = [UInt8](repeating: 0x80, count: 10) + [0x00]
        #expect(throws: FormatError.malformedVarint(offset: 0)) { try readVarint(eleven) }
        let elevenAt3 = [0x01, 0x02, 0x03] + [UInt8](repeating: 0xFF, count: 10) + [0x01]
        #expect(throws: FormatError.malformedVarint(offset: 3)) { try readVarint(elevenAt3, at: 3) }
        let longRun = [UInt8](repeating: 0xFF, count: 64)
        #expect(throws: FormatError.malformedVarint(offset: 0)) { try readVarint(longRun) }
        // Ten continuation bytes can never become a valid varint, whatever follows.
        let tenContinuations = [UInt8](repeating: 0x80, count: 10)
        #expect(throws: FormatError.self) { try readVarint(tenContinuations) }
    }

    @Test("ByteCursor fixed-width and byte reads are bounds-checked")
    func cursorBounds() throws {
        let bytes: [UInt8] = [0x01, 0x02, 0x03, 0x04, 0x05]
        try bytes.withUnsafeBytes { raw in
            var cursor = ByteCursor(raw)
            let word = try cursor.readLittleEndian(UInt32.self)
            #expect(word == 0x0403_0201)
            #expect(cursor.remaining == 1)
            #expect(throws: FormatError.truncated(offset: 4)) { _ = try cursor.readLittleEndian(UInt16.self) }
            #expect(cursor.position == 4, "a failed read leaves the position")
            #expect(throws: FormatError.truncated(offset: 4)) { _ = try cursor.readBytes(2) }
            #expect(throws: FormatError.truncated(offset: 4)) { _ = try cursor.readBytes(-1) }
            let last = try cursor.readBytes(1)
            #expect(Array(last) == [0x05])
            #expect(cursor.isAtEnd)
            let none = try cursor.readBytes(0)
            #expect(none.isEmpty)
        }
    }
}
