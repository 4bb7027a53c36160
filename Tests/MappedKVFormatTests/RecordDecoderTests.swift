import MappedKVFormat
import Testing

private let holder = RegionBuilder.holder

private func record(_ key: String, _ value: [UInt8]) -> [UInt8] { RegionBuilder.record(key, value) }

private func decode(
    _ region: [UInt8], from start: Int = 0, skipsHolder: Bool = true
) -> (DecodeSummary, [RecordLocation]) {
    region.decodeRegion(from: start, skipsHolder: skipsHolder)
}

/// `varint(n)` followed by `n` copies of `byte`.
private func lengthPrefixed(_ count: Int, _ byte: UInt8 = 0x6B) -> [UInt8] {
    Varint.encode(UInt64(count)) + [UInt8](repeating: byte, count: count)
}

@Suite("Record decoder")
struct RecordDecoderTests {
    @Test("the worked example of 2.11 decodes to its live keys: last record wins, b deleted")
    func workedExample() throws {
        let example = try WorkedExample.load()
        let region = example.region
        #expect(region.count == 111)
        #expect(UInt64(region.count) == example.metaDecimal("actualSize"))
        #expect(Array(region.prefix(4)).hex == example.facts["holder"])
        #expect(CRC32.checksum(region) == example.metaHex("crc"))
        #expect(CRC32.checksum(region.prefix(4)) == example.metaHex("lastConfirmedCRC"))

        let (summary, locations) = decode(region)
        #expect(summary.error == nil)
        #expect(summary.isComplete)
        #expect(summary.validEnd == region.count)
        #expect(summary.recordCount == example.fact("records"))
        #expect(summary.skippedEmptyKeys == example.fact("skippedEmptyKeys"))
        #expect(locations.count == summary.recordCount)
        #expect(locations.first?.start == 4, "the first record follows the 4-byte holder")
        #expect(locations.last?.isDeletion == true)
        #expect(locations.filter(\.isDeletion).count == 1)

        let live = liveKeys(region, locations)
        #expect(live.count == example.fact("liveCount"))
        #expect(live == example.keys)
        #expect(live[Array("b".utf8)] == nil)

        // The payloads decode to the values of the script.
        func payload(_ key: String) -> [UInt8] { live[Array(key.utf8)] ?? [] }
        #expect(try Int32(payload: payload("i32")) == -1)
        #expect(try UInt32(payload: payload("u32")) == 300)
        #expect(try Int64(payload: payload("i64")) == -2)
        #expect(try UInt64(payload: payload("u64")) == 1 << 40)
        #expect(try Float(payload: payload("f")) == 1.5)
        #expect(try Double(payload: payload("d")) == 2.25)
        #expect(try String(payload: payload("s")) == "hello")
        #expect(try String(payload: payload("es")) == "")
        #expect(try [String](payload: payload("v")) == ["a", "bc"])
        #expect(try [UInt8](payload: payload("bytes")) == [1, 2, 3])
    }

    @Test("record locations point at the right bytes")
    func locations() {
        let region = holder + record("key", [0x01, 0x02]) + RegionBuilder.deletion("key")
        let (summary, locations) = decode(region)
        #expect(summary.isComplete)
        #expect(
            locations == [
                RecordLocation(start: 4, keyStart: 5, keyLength: 3, valueStart: 9, valueLength: 2),
                RecordLocation(start: 11, keyStart: 12, keyLength: 3, valueStart: 16, valueLength: 0),
            ])
        #expect(locations[0].end == 11 && locations[0].keyRange == 5..<8 && locations[0].valueRange == 9..<11)
        #expect(locations[1].isDeletion && !locations[0].isDeletion)
        #expect(liveKeys(region, locations).isEmpty)
    }

    @Test("the last record wins and a deletion followed by a set revives the key")
    func lastRecordWins() {
        let region =
            holder + record("a", [1]) + record("b", [2]) + record("a", [3])
            + RegionBuilder.deletion("b") + RegionBuilder.deletion("c") + record("b", [4]) + record("a", [5, 6])
        let (summary, locations) = decode(region)
        #expect(summary.isComplete && summary.recordCount == 7)
        #expect(liveKeys(region, locations) == [Array("a".utf8): [5, 6], Array("b".utf8): [4]])
    }

    @Test(
        "MMKV 2.4.2 plain stores decode to their .expect contents",
        arguments: [
            ("a_plain", "case_a"), ("c_overwrites", "case_c"),
        ])
    func realMMKVFiles(_ folder: String, _ id: String) throws {
        let store = try MMKVCase.load(folder: folder, id: id)
        let meta = try MetaInfo(parsing: store.meta)
        #expect(meta.version == .flag)
        #expect(meta.flags.isEmpty)
        #expect(String(meta.actualSize) == store.info["actualSize"])
        let region = Array(store.data[4..<(4 + Int(meta.actualSize))])
        #expect(CRC32.checksum(region) == meta.crcDigest)
        #expect(CRC32.checksum(region.prefix(Int(meta.lastConfirmedActualSize))) == meta.lastConfirmedCRC)

        let (summary, locations) = decode(region)
        #expect(summary.isComplete)
        #expect(summary.validEnd == region.count)
        let live = liveKeys(region, locations)
        #expect(live == store.expected)
        #expect(live.count == store.expectedCount)

        // The whole page after the region is zeros: a greedy decode of it skips them as empty keys.
        let page = Array(store.data[4...])
        let (pageSummary, pageLocations) = decode(page)
        #expect(pageSummary.isComplete)
        #expect(pageSummary.skippedEmptyKeys == page.count - region.count)
        #expect(liveKeys(page, pageLocations) == store.expected)
    }

    @Test("zero-length keys are skipped without consuming a value")
    func zeroLengthKeys() {
        // If the byte after a zero key length were read as a value length, "01 6b 01 07" would be lost.
        let region = holder + [0x00] + record("k", [0x07]) + [0x00, 0x00] + record("j", [0x08]) + [0x00]
        let (summary, locations) = decode(region)
        #expect(summary.isComplete)
        #expect(summary.skippedEmptyKeys == 4)
        #expect(summary.recordCount == 2)
        #expect(summary.validEnd == region.count)
        #expect(liveKeys(region, locations) == [[0x6B]: [0x07], [0x6A]: [0x08]])

        let zeros = [UInt8](repeating: 0, count: 4096)
        let (zeroSummary, zeroLocations) = decode(zeros)
        #expect(zeroSummary.isComplete && zeroLocations.isEmpty)
        #expect(zeroSummary.skippedEmptyKeys == 4095, "one zero byte is the holder")
    }

    @Test("the holder may be any varint of 1 to 10 bytes")
    func holderLengths() {
        let body = record("k", [0x01])
        for length in 1...10 {
            let holderBytes = [UInt8](repeating: 0x80, count: length - 1) + [0x01]
            let (summary, locations) = decode(holderBytes + body)
            #expect(summary.isComplete)
            #expect(locations.map(\.start) == [length])
        }
        let (summary, _) = decode([UInt8](repeating: 0x80, count: 11) + [0x00] + body)
        #expect(summary.error == .malformedVarint(offset: 0))
        #expect(summary.validEnd == 0)
    }

    @Test("an empty region and a holder-only region decode to nothing")
    func emptyRegions() {
        let (empty, _) = decode([])
        #expect(empty == DecodeSummary(validEnd: 0, recordCount: 0, skippedEmptyKeys: 0, error: nil))
        let (holderOnly, _) = decode(holder)
        #expect(holderOnly == DecodeSummary(validEnd: 4, recordCount: 0, skippedEmptyKeys: 0, error: nil))
    }

    @Test("a partial decode from an offset reads no holder and reports region-relative offsets")
    func partialDecode() {
        let first = holder + record("a", [1])
        let region = first + record("b", [2, 3]) + RegionBuilder.deletion("a")
        let (summary, locations) = decode(region, from: first.count, skipsHolder: false)
        #expect(summary.isComplete && summary.validEnd == region.count && summary.recordCount == 2)
        #expect(locations.first?.start == first.count)
        #expect(locations.first.map { Array(region[$0.keyRange]) } == [0x62])
        let (atEnd, none) = decode(region, from: region.count, skipsHolder: false)
        #expect(atEnd.isComplete && atEnd.validEnd == region.count && none.isEmpty)
    }

    // MARK: Strict errors

    @Test("a key longer than 65531 bytes is an error; 65531 is accepted")
    func keyTooLong() {
        let good = holder + lengthPrefixed(65_531) + [0x01, 0x01]
        let (goodSummary, goodLocations) = decode(good)
        #expect(goodSummary.isComplete && goodLocations.count == 1)
        #expect(goodLocations.first?.keyLength == 65_531)

        let prefix = holder + record("a", [1])
        let bad = prefix + lengthPrefixed(65_532) + [0x01, 0x01]
        let (summary, locations) = decode(bad)
        #expect(summary.error == .keyTooLong(offset: prefix.count, length: 65_532))
        #expect(summary.validEnd == prefix.count)
        #expect(summary.recordCount == 1 && locations.count == 1)
    }

    @Test("a record header longer than 65535 bytes is an error; exactly 65535 is accepted")
    func headerTooLong() {
        // varint(65531) is 3 bytes: 3 + 65531 + varint(127) = 65535; with a 128-byte value the header is 65536.
        let atLimit = holder + lengthPrefixed(65_531) + lengthPrefixed(127, 0x01)
        let (okSummary, okLocations) = decode(atLimit)
        #expect(okSummary.isComplete && okLocations.count == 1)
        #expect(okLocations.first.map { $0.valueStart - $0.start } == 65_535)

        let overLimit = holder + lengthPrefixed(65_531) + lengthPrefixed(128, 0x01)
        let (summary, locations) = decode(overLimit)
        #expect(summary.error == .recordHeaderTooLong(offset: 4, length: 65_536))
        #expect(summary.validEnd == 4 && locations.isEmpty)
    }

    @Test("a value length past the end is an error")
    func valueLengthPastEnd() {
        // holder | 01 'k' | 05 01 02: the value length varint sits at offset 6.
        let region = holder + [0x01, 0x6B, 0x05, 0x01, 0x02]
        let (summary, locations) = decode(region)
        #expect(summary.error == .invalidLength(offset: 6, length: 5))
        #expect(summary.validEnd == 4 && locations.isEmpty)

        let keyPastEnd = holder + [0x05, 0x6B]
        #expect(decode(keyPastEnd).0.error == .invalidLength(offset: 4, length: 5))
        let valueLengthMissing = holder + [0x01, 0x6B]
        #expect(decode(valueLengthMissing).0.error == .truncated(offset: 6))
    }

    @Test("lengths that are negative as int32 are errors")
    func negativeLengths() {
        let minusOne32: [UInt8] = [0xFF, 0xFF, 0xFF, 0xFF, 0x0F]  // 0xFFFFFFFF
        let minusOne64: [UInt8] = Int64(-1).payloadBytes  // 10-byte -1
        let int32Min: [UInt8] = [0x80, 0x80, 0x80, 0x80, 0x08]  // 0x80000000
        let filler = [UInt8](repeating: 0, count: 32)
        for (bytes, raw) in [
            (minusOne32, UInt64(0xFFFF_FFFF)), (minusOne64, UInt64.max), (int32Min, UInt64(0x8000_0000)),
        ] {
            let keyCase = holder + bytes + filler
            #expect(decode(keyCase).0.error == .invalidLength(offset: 4, length: raw), "key length \(bytes.hex)")
            let valueCase = holder + [0x01, 0x6B] + bytes + filler
            #expect(decode(valueCase).0.error == .invalidLength(offset: 6, length: raw), "value length \(bytes.hex)")
        }
    }

    @Test("a length varint above Int32.max is rejected, not truncated to its low 32 bits")
    func oversizedLengthsAreRejected() {
        // MMKV's readRawVarint32 would keep the low 32 bits, reading 2^32 + 1 as length 1. MMKV never
        // writes such a varint (lengths are minimal and below 2^31), so MappedKV treats it as damage:
        // silently truncating is how garbage gets accepted as a record.
        let region = holder + [0x81, 0x80, 0x80, 0x80, 0x10, 0x6B, 0x01, 0x07]
        let (summary, locations) = decode(region)
        #expect(summary.error == .invalidLength(offset: 4, length: 4_294_967_297))
        #expect(locations.isEmpty)
        #expect(summary.validEnd == holder.count)
    }

    @Test("a greedy decode's validEnd stops at the end of the last good record")
    func greedyValidEnd() {
        let good = holder + record("one", [1]) + [0x00] + record("two", [2, 2])
        let next = record("three", [3, 3, 3])
        for cut in 1..<next.count {
            let region = good + next.prefix(cut)
            let (summary, locations) = decode(region)
            #expect(summary.error != nil, "cut at \(cut)")
            #expect(summary.validEnd == good.count, "cut at \(cut)")
            #expect(summary.recordCount == 2 && locations.count == 2)
            #expect(summary.skippedEmptyKeys == 1)
            #expect(liveKeys(region, locations) == [Array("one".utf8): [1], Array("two".utf8): [2, 2]])
        }
        // Garbage after good records: an over-long varint.
        let garbage = good + [UInt8](repeating: 0xFF, count: 12)
        let (summary, _) = decode(garbage)
        #expect(summary.error == .malformedVarint(offset: good.count))
        #expect(summary.validEnd == good.count)
    }

    // MARK: Encoding side

    @Test("records built with Record.append decode back; sizes match encodedSize and headerSize")
    func recordRoundTrip() {
        var rng = SplitMix64(seed: 0x2EC0_2D00)
        var region = holder
        var expected: [[UInt8]: [UInt8]] = [:]
        var ends: [Int] = []
        for _ in 0..<400 {
            let key = rng.bytes(count: [1, 2, 127, 128, 300].randomElement(using: &rng)!)
            let deletes = Int.random(in: 0..<8, using: &rng) == 0
            let value = deletes ? [] : rng.bytes(count: [1, 5, 127, 128, 16_384, 20_000].randomElement(using: &rng)!)
            let before = region.count
            if deletes {
                key.withUnsafeBytes { Record.appendDeletion(key: $0, to: &region) }
                expected[key] = nil
            } else {
                key.withUnsafeBytes { k in value.withUnsafeBytes { v in Record.append(key: k, value: v, to: &region) } }
                expected[key] = value
            }
            #expect(region.count - before == Record.encodedSize(keyLength: key.count, valueLength: value.count))
            ends.append(region.count)
        }
        let (summary, locations) = decode(region)
        #expect(summary.isComplete && summary.recordCount == 400)
        #expect(locations.map(\.end) == ends)
        for location in locations {
            #expect(
                location.valueStart - location.start
                    == Record.headerSize(keyLength: location.keyLength, valueLength: location.valueLength))
        }
        #expect(liveKeys(region, locations) == expected)
    }

    // MARK: Robustness

    @Test("2,000 random byte strings never crash and validEnd stays within bounds")
    func fuzz() {
        var rng = SplitMix64(seed: 0xF022_0001)
        for iteration in 0..<2_000 {
            let count = Int.random(in: 0...96, using: &rng)
            // Mostly small bytes, so that lengths often fit and records parse.
            let bytes: [UInt8] = (0..<count).map { _ in
                switch Int.random(in: 0..<4, using: &rng) {
                case 0, 1: UInt8.random(in: 0...6, using: &rng)
                case 2: UInt8.random(in: 0x61...0x7A, using: &rng)
                default: UInt8.random(in: 0...255, using: &rng)
                }
            }
            let start = iteration % 3 == 0 ? Int.random(in: 0...count, using: &rng) : 0
            let skipsHolder = iteration % 2 == 0
            let (summary, locations) = decode(bytes, from: start, skipsHolder: skipsHolder)
            #expect(summary.validEnd >= start && summary.validEnd <= bytes.count)
            #expect(summary.recordCount == locations.count)
            if summary.error == nil { #expect(summary.validEnd == bytes.count) }
            var previousEnd = start
            for location in locations {
                #expect(location.start >= previousEnd && location.keyStart > location.start)
                #expect(location.keyLength >= 1 && location.valueStart >= location.keyStart + location.keyLength)
                #expect(location.end <= summary.validEnd)
                previousEnd = location.end
            }
        }
    }
}
