import MappedKVFormat
import Testing

struct CRCVector: Sendable, CustomTestStringConvertible {
    var kind: String
    var input: String
    /// The input split as the vector says; one chunk unless `kind == "chunks"`.
    var chunks: [[UInt8]]
    var expected: UInt32

    var bytes: [UInt8] { chunks.flatMap { $0 } }
    var testDescription: String {
        "\(kind) \(input.count > 40 ? String(input.prefix(40)) + "…" : input) -> \(String(expected, radix: 16))"
    }

    static let all: [CRCVector] = VectorFiles.rowsOrEmpty("crc32.txt").compactMap { row in
        guard row.count == 3, let expected = UInt32(row[2], radix: 16) else { return nil }
        let chunks: [[UInt8]]
        switch row[0] {
        case "ascii": chunks = [Array(row[1].utf8)]
        case "hex":
            guard let bytes = try? [UInt8](hex: row[1]) else { return nil }
            chunks = [bytes]
        case "zeros":
            guard let count = Int(row[1]) else { return nil }
            chunks = [[UInt8](repeating: 0, count: count)]
        case "chunks":
            let parsed = row[1].split(separator: " ").map { try? [UInt8](hex: $0) }
            guard parsed.allSatisfy({ $0 != nil }) else { return nil }
            chunks = parsed.map { $0! }
        default: return nil
        }
        return CRCVector(kind: row[0], input: row[1], chunks: chunks, expected: expected)
    }
}

private func update(_ crc: UInt32, _ bytes: [UInt8]) -> UInt32 {
    bytes.withUnsafeBytes { CRC32.update(crc, $0) }
}

@Suite("CRC-32")
struct CRC32Tests {
    @Test("the vector file parses and holds the standard check value, the empty input and every kind")
    func vectorFileIsComplete() throws {
        let rows = try VectorFiles.rows("crc32.txt")
        #expect(rows.count == CRCVector.all.count, "every row of crc32.txt must parse")
        #expect(CRCVector.all.contains { $0.kind == "ascii" && $0.input == "123456789" && $0.expected == 0xCBF4_3926 })
        #expect(CRCVector.all.contains { $0.bytes.isEmpty && $0.expected == 0 })
        for kind in ["ascii", "hex", "zeros", "chunks"] {
            #expect(CRCVector.all.contains { $0.kind == kind }, "no \(kind) vector")
        }
    }

    @Test("one-shot checksum matches zlib.crc32", arguments: CRCVector.all)
    func oneShot(_ vector: CRCVector) {
        #expect(CRC32.checksum(vector.bytes) == vector.expected)
        #expect(update(0, vector.bytes) == vector.expected)
    }

    @Test("chaining over the chunks matches zlib.crc32", arguments: CRCVector.all)
    func chained(_ vector: CRCVector) {
        let crc = vector.chunks.reduce(UInt32(0)) { update($0, $1) }
        #expect(crc == vector.expected)
    }

    @Test("the empty range leaves any CRC unchanged")
    func emptyUpdate() {
        for crc: UInt32 in [0, 1, 0xCBF4_3926, 0xFFFF_FFFF] {
            #expect(update(crc, []) == crc)
        }
        #expect(CRC32.checksum([UInt8]()) == 0)
    }

    @Test("incremental CRC over random splits equals the one-shot CRC")
    func incrementalEqualsOneShot() {
        var rng = SplitMix64(seed: 0xC8C3_2000)
        for _ in 0..<300 {
            let data = rng.bytes(count: Int.random(in: 0...600, using: &rng))
            let oneShot = CRC32.checksum(data)
            var crc: UInt32 = 0
            var start = 0
            while start < data.count {
                let end = min(data.count, start + Int.random(in: 0...80, using: &rng))
                crc = update(crc, Array(data[start..<end]))
                start = end
            }
            #expect(crc == oneShot)
        }
    }

    @Test("checksum accepts any byte sequence, not only arrays")
    func sequenceInput() {
        #expect(CRC32.checksum("123456789".utf8) == 0xCBF4_3926)
        #expect(CRC32.checksum([UInt8](repeating: 0, count: 4)[...]) == 0x2144_DF1C)
    }
}
