import MappedKVFormat
import Testing

/// Stores `value` little-endian at `offset`, written out byte by byte.
private func put(_ value: UInt64, width: Int, at offset: Int, in bytes: inout [UInt8]) {
    for index in 0..<width { bytes[offset + index] = UInt8(truncatingIfNeeded: value >> UInt64(8 * index)) }
}

/// A meta struct built by hand at the offsets of docs/FORMAT.md 3.1.
private func handBuiltMeta() -> [UInt8] {
    var bytes = [UInt8](repeating: 0, count: 112)
    put(0x1122_3344, width: 4, at: 0, in: &bytes)  // crc
    put(4, width: 4, at: 4, in: &bytes)  // version
    put(0x0102_0304, width: 4, at: 8, in: &bytes)  // sequence
    for index in 0..<16 { bytes[12 + index] = 0xA0 + UInt8(index) }  // iv
    put(0x0000_1234, width: 4, at: 28, in: &bytes)  // actualSize
    put(0x0000_0567, width: 4, at: 32, in: &bytes)  // lastConfirmed.lastActualSize
    put(0xCAFE_BABE, width: 4, at: 36, in: &bytes)  // lastConfirmed.lastCRCDigest
    for index in 0..<64 { bytes[40 + index] = UInt8(index) }  // reserved
    put(0x8000_0000_0000_0001, width: 8, at: 104, in: &bytes)  // flags
    return bytes
}

private func iv(_ first: UInt8) -> InitializationVector {
    InitializationVector((0..<16).map { first &+ UInt8($0) })!
}

/// A v4 meta with every field set, as an append would find it.
private func populatedMeta(version: UInt32 = 4, flags: MetaFlags = .keyExpiry) -> MetaInfo {
    var meta = MetaInfo()
    meta.crcDigest = 0x1111_1111
    meta.version = MetaVersion(rawValue: version)
    meta.sequence = 7
    meta.iv = iv(0x40)
    meta.actualSize = 100
    meta.lastConfirmedActualSize = 50
    meta.lastConfirmedCRC = 0x2222_2222
    meta.flags = flags
    return meta
}

/// The byte offsets at which two serialized metas differ.
private func differingOffsets(_ a: MetaInfo, _ b: MetaInfo) -> [Int] {
    zip(a.serialized, b.serialized).enumerated().filter { $0.element.0 != $0.element.1 }.map(\.offset)
}

@Suite("Meta info")
struct MetaInfoTests {
    @Test("the field offsets and size match docs/FORMAT.md 3.1")
    func layout() {
        #expect(MetaInfo.size == 112)
        #expect(MetaInfo.Offset.crcDigest == 0)
        #expect(MetaInfo.Offset.version == 4)
        #expect(MetaInfo.Offset.sequence == 8)
        #expect(MetaInfo.Offset.iv == 12)
        #expect(MetaInfo.Offset.actualSize == 28)
        #expect(MetaInfo.Offset.lastConfirmedActualSize == 32)
        #expect(MetaInfo.Offset.lastConfirmedCRC == 36)
        #expect(MetaInfo.Offset.reserved == 40)
        #expect(MetaInfo.Offset.flags == 104)
    }

    @Test("parses a hand-built struct field by field and serializes it back byte for byte")
    func parseAndSerialize() throws {
        let bytes = handBuiltMeta()
        let meta = try MetaInfo(parsing: bytes)
        #expect(meta.crcDigest == 0x1122_3344)
        #expect(meta.version == .flag)
        #expect(meta.sequence == 0x0102_0304)
        #expect(meta.iv.bytes == (0..<16).map { 0xA0 + UInt8($0) })
        #expect(meta.actualSize == 0x1234)
        #expect(meta.lastConfirmedActualSize == 0x567)
        #expect(meta.lastConfirmedCRC == 0xCAFE_BABE)
        #expect(meta.reserved == (0..<64).map { UInt8($0) })
        #expect(meta.flags.rawValue == 0x8000_0000_0000_0001)
        #expect(meta.flags.contains(.keyExpiry))
        #expect(meta.serialized == bytes)

        // Only the first 112 bytes count: a whole page with junk after the struct parses the same.
        let page = bytes + [UInt8](repeating: 0x5A, count: 4096 - 112)
        #expect(try MetaInfo(parsing: page) == meta)

        // write(to:) fills exactly the first 112 bytes.
        var destination = [UInt8](repeating: 0xEE, count: 120)
        destination.withUnsafeMutableBytes { meta.write(to: $0) }
        #expect(Array(destination.prefix(112)) == bytes)
        #expect(destination.suffix(8).allSatisfy { $0 == 0xEE })
    }

    @Test("random structs round-trip")
    func randomRoundTrip() throws {
        var rng = SplitMix64(seed: 0x3E7A_0001)
        for _ in 0..<200 {
            let bytes = rng.bytes(count: 112)
            let meta = try MetaInfo(parsing: bytes)
            #expect(meta.serialized == bytes)
            #expect(try MetaInfo(parsing: meta.serialized) == meta)
        }
    }

    @Test("a struct shorter than 112 bytes is rejected")
    func tooShort() {
        #expect(throws: FormatError.metaTooShort(length: 111)) {
            try MetaInfo(parsing: [UInt8](repeating: 0, count: 111))
        }
        #expect(throws: FormatError.metaTooShort(length: 0)) { try MetaInfo(parsing: [UInt8]()) }
    }

    @Test("the all-zero meta of a new file")
    func zeroMeta() throws {
        let zero = MetaInfo()
        #expect(zero.serialized == [UInt8](repeating: 0, count: 112))
        #expect(try MetaInfo(parsing: [UInt8](repeating: 0, count: 112)) == zero)
        #expect(zero.version == .default && zero.iv == .zero && zero.flags.isEmpty)
        #expect(!zero.holdsActualSize)
        #expect(InitializationVector([UInt8](repeating: 1, count: 15)) == nil)
        #expect(InitializationVector([UInt8](repeating: 1, count: 17)) == nil)
    }

    @Test("holdsActualSize from version 3")
    func holdsActualSize() {
        for raw: UInt32 in 0...8 {
            var meta = MetaInfo()
            meta.version = MetaVersion(rawValue: raw)
            #expect(meta.holdsActualSize == (raw >= 3))
        }
    }

    // MARK: normalized (3.2)

    @Test("normalized: version 7 or more reads as version 3 without flags", arguments: [7, 8, 100, UInt32.max])
    func normalizedInvalidVersion(_ raw: UInt32) {
        let meta = populatedMeta(version: raw, flags: .keyExpiry)
        let normalized = meta.normalized
        #expect(normalized.version == .actualSize)
        #expect(normalized.flags.isEmpty)
        // Everything else is kept.
        var expected = meta
        expected.version = .actualSize
        expected.flags = []
        #expect(normalized == expected)
    }

    @Test("normalized: flags below version 4 are cleared", arguments: [0, 1, 2, 3] as [UInt32])
    func normalizedFlagsBelow4(_ raw: UInt32) {
        let meta = populatedMeta(version: raw, flags: MetaFlags(rawValue: 0b101))
        let normalized = meta.normalized
        #expect(normalized.version.rawValue == raw)
        #expect(normalized.flags.isEmpty)
        var expected = meta
        expected.flags = []
        #expect(normalized == expected)
        // Without flags nothing changes.
        let clean = populatedMeta(version: raw, flags: [])
        #expect(clean.normalized == clean)
    }

    @Test("normalized: versions 4 to 6 are kept with their flags", arguments: [4, 5, 6] as [UInt32])
    func normalizedValid(_ raw: UInt32) {
        let meta = populatedMeta(version: raw, flags: .keyExpiry)
        #expect(meta.normalized == meta)
    }

    // MARK: update (3.3)

    @Test("an append on a v4 meta touches only crc and actualSize", arguments: [4, 5, 6] as [UInt32])
    func appendOnV4(_ raw: UInt32) {
        let before = populatedMeta(version: raw)
        var meta = before
        let write = meta.update(actualSize: 0x0102_0304, crc: 0xA1B2_C3D4, increasesSequence: false)
        #expect(write == .crcAndSizeOnly)
        var expected = before
        expected.crcDigest = 0xA1B2_C3D4
        expected.actualSize = 0x0102_0304
        #expect(meta == expected)
        #expect(Set(differingOffsets(before, meta)).isSubset(of: Set(0..<4).union(28..<32)))
        #expect(Set(differingOffsets(before, meta)) == Set(0..<4).union(28..<32))
    }

    @Test("increasesSequence bumps the sequence, sets lastConfirmed and writes the whole struct")
    func increasesSequence() {
        let before = populatedMeta()
        var meta = before
        let write = meta.update(actualSize: 300, crc: 0xDEAD_BEEF, increasesSequence: true)
        #expect(write == .wholeStruct)
        #expect(meta.sequence == before.sequence + 1)
        #expect(meta.lastConfirmedActualSize == 300 && meta.lastConfirmedCRC == 0xDEAD_BEEF)
        #expect(meta.actualSize == 300 && meta.crcDigest == 0xDEAD_BEEF)
        #expect(meta.version == .flag)
        #expect(meta.flags == before.flags, "flags are kept at version 4")
        #expect(meta.iv == before.iv, "no IV passed: the IV is kept")

        var wrapping = populatedMeta()
        wrapping.sequence = UInt32.max
        _ = wrapping.update(actualSize: 4, crc: 1, increasesSequence: true)
        #expect(wrapping.sequence == 0, "the u32 sequence wraps")

        var v5 = populatedMeta(version: 5)
        _ = v5.update(actualSize: 4, crc: 1, increasesSequence: true)
        #expect(v5.version.rawValue == 5, "a higher version is kept")
    }

    @Test("a new IV is stored, raises the version to at least 2 and writes the whole struct")
    func newIV() {
        for raw: UInt32 in [0, 1, 2, 3, 4, 5] {
            var meta = populatedMeta(version: raw, flags: [])
            let write = meta.update(actualSize: 40, crc: 0x55, iv: iv(0x90), increasesSequence: false)
            #expect(write == .wholeStruct)
            #expect(meta.iv == iv(0x90))
            #expect(meta.version >= .randomIV)
            #expect(meta.version.rawValue == max(raw, 4), "every write ends at version 4 or more")
            #expect(meta.sequence == 7, "no sequence change without increasesSequence")
            #expect(meta.lastConfirmedActualSize == 50 && meta.lastConfirmedCRC == 0x2222_2222)
        }
    }

    @Test("version 0 is raised to 4 by any update, clearing flags")
    func versionZeroRaised() {
        var meta = MetaInfo()
        meta.flags = .keyExpiry
        let write = meta.update(actualSize: 9, crc: 0x99, increasesSequence: false)
        #expect(write == .wholeStruct)
        #expect(meta.version == .flag)
        #expect(meta.flags.isEmpty)
        #expect(meta.sequence == 0)
        #expect(meta.crcDigest == 0x99 && meta.actualSize == 9)
        #expect(meta.lastConfirmedActualSize == 0 && meta.lastConfirmedCRC == 0)
    }

    @Test(
        "versions 1 to 3 are raised to 4 with a whole-struct write; flags are cleared",
        arguments: [1, 2, 3] as [UInt32])
    func lowVersionsRaised(_ raw: UInt32) {
        var meta = populatedMeta(version: raw, flags: .keyExpiry)
        let write = meta.update(actualSize: 9, crc: 0x99, increasesSequence: false)
        #expect(write == .wholeStruct)
        #expect(meta.version == .flag)
        #expect(meta.flags.isEmpty)
        #expect(meta.sequence == 7 && meta.iv == iv(0x40))
    }

    // MARK: The worked example

    @Test("replaying the worked example's writes gives its meta")
    func workedExampleMeta() throws {
        let example = try WorkedExample.load()
        let region = example.region
        var expected = MetaInfo()
        expected.crcDigest = try #require(example.metaHex("crc"))
        expected.version = MetaVersion(rawValue: UInt32(try #require(example.metaDecimal("version"))))
        expected.sequence = UInt32(try #require(example.metaDecimal("sequence")))
        let ivHex = try #require(example.meta["iv"])
        expected.iv = try #require(InitializationVector([UInt8](hex: ivHex)))
        expected.actualSize = UInt32(try #require(example.metaDecimal("actualSize")))
        expected.lastConfirmedActualSize = UInt32(try #require(example.metaDecimal("lastConfirmedActualSize")))
        expected.lastConfirmedCRC = try #require(example.metaHex("lastConfirmedCRC"))
        expected.flags = MetaFlags(rawValue: try #require(example.metaDecimal("flags")))
        #expect(expected.crcDigest == 0xE61B_125B && expected.lastConfirmedCRC == 0xBD2B_4407)

        // A fresh file: the first insert does a full write-back of the holder alone, then every
        // record is appended with an incremental CRC.
        var meta = MetaInfo()
        var crc = CRC32.checksum(region.prefix(4))
        #expect(meta.update(actualSize: 4, crc: crc, increasesSequence: true) == .wholeStruct)
        let (summary, locations) = region.decodeRegion(skipsHolder: true)
        #expect(summary.isComplete)
        for location in locations {
            crc = Array(region[location.start..<location.end]).withUnsafeBytes { CRC32.update(crc, $0) }
            let write = meta.update(actualSize: UInt32(location.end), crc: crc, increasesSequence: false)
            #expect(write == .crcAndSizeOnly)
        }
        #expect(meta == expected)
        #expect(try MetaInfo(parsing: meta.serialized) == expected)
        #expect(meta.normalized == meta)
        #expect(meta.holdsActualSize)
    }

    @Test("the meta of an MMKV 2.4.2 store parses and re-serializes byte for byte")
    func realMMKVMeta() throws {
        let store = try MMKVCase.load(folder: "a_plain", id: "case_a")
        let meta = try MetaInfo(parsing: store.meta)
        #expect(meta.serialized == Array(store.meta.prefix(112)))
        #expect(meta.version == .flag && meta.sequence == 1)
        #expect(meta.actualSize == 109)
        #expect(meta.lastConfirmedActualSize == 4)
        #expect(meta.reserved.allSatisfy { $0 == 0 })
    }
}
