import MappedKVFormat
import Testing

/// Decodes a holder and returns its value and length.
private func readHolder(_ bytes: [UInt8]) throws -> (UInt64, Int) {
    try bytes.withUnsafeBytes { raw in
        var cursor = ByteCursor(raw)
        let value = try cursor.readVarint64()
        return (value, cursor.position)
    }
}

@Suite("Item size holder")
struct HolderTests {
    @Test("the range holds exactly the values whose minimal varint is 4 bytes")
    func range() {
        #expect(ItemSizeHolder.encodedLength == 4)
        #expect(ItemSizeHolder.valueRange == 0x20_0000...0x0FFF_FFFF)
        #expect(Varint.size(of: ItemSizeHolder.valueRange.lowerBound) == 4)
        #expect(Varint.size(of: ItemSizeHolder.valueRange.upperBound) == 4)
        #expect(Varint.size(of: ItemSizeHolder.valueRange.lowerBound - 1) == 3)
        #expect(Varint.size(of: ItemSizeHolder.valueRange.upperBound + 1) == 5)
    }

    @Test("seeded random holders are always 4 bytes and within the range")
    func seededHolders() throws {
        var rng = SplitMix64(seed: 0x4013_DE50)
        var values = Set<UInt64>()
        for _ in 0..<10_000 {
            let holder = ItemSizeHolder.random(using: &rng)
            #expect(holder.count == 4)
            #expect(holder.prefix(3).allSatisfy { $0 & 0x80 != 0 } && holder[3] & 0x80 == 0)
            #expect(holder[3] != 0, "a minimal 4-byte varint has a non-zero last group")
            let (value, length) = try readHolder(holder)
            #expect(length == 4)
            #expect(ItemSizeHolder.valueRange.contains(value))
            values.insert(value)
        }
        #expect(values.count > 9_900, "holders should vary")
    }

    @Test("the same seed gives the same holders")
    func deterministic() {
        var a = SplitMix64(seed: 42)
        var b = SplitMix64(seed: 42)
        for _ in 0..<100 {
            #expect(ItemSizeHolder.random(using: &a) == ItemSizeHolder.random(using: &b))
        }
    }

    @Test("system-random holders are 4 bytes and within the range")
    func systemHolders() throws {
        for _ in 0..<1_000 {
            let holder = ItemSizeHolder.random()
            #expect(holder.count == 4)
            let (value, length) = try readHolder(holder)
            #expect(length == 4 && ItemSizeHolder.valueRange.contains(value))
        }
    }

    @Test("a region starting with a random holder decodes past it")
    func regionWithHolder() {
        var rng = SplitMix64(seed: 7)
        for _ in 0..<100 {
            let region = ItemSizeHolder.random(using: &rng) + RegionBuilder.record("k", [0x01])
            let (summary, locations) = region.decodeRegion(skipsHolder: true)
            #expect(summary.isComplete)
            #expect(locations.map(\.start) == [4])
        }
    }
}
