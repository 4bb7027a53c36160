// Reads that lend the stored bytes instead of copying them, and scans in file order.

import MappedKVFormat
import Testing

@testable import MappedKV

@Suite("Zero-copy reads and file-order scans")
struct ZeroCopyReadTests {
    @Test func withBytesLendsExactlyTheStoredBytes() throws {
        let dir = TemporaryDirectory("with-bytes")
        let store = try MappedKV(id: "s", directory: dir.path)
        let value: [UInt8] = (0..<300).map { UInt8(truncatingIfNeeded: $0 &* 7) }
        try store.set(value, forKey: "blob")
        try store.set([], forKey: "empty")
        try store.set(Int32(7), forKey: "number")
        #expect(try store.withBytes(forKey: "blob") { Array($0) } == value)
        #expect(try store.withBytes(forKey: "empty") { $0.count } == 0)
        #expect(try store.withBytes(forKey: "absent") { $0.count } == nil)
        // A varint 7 read as bytes claims 7 bytes that are not there: refused, not read past the value.
        #expect(throws: MappedKVError.self) { _ = try store.withBytes(forKey: "number") { $0.count } }
    }

    @Test func forEachEntryVisitsRecordsInFileOrder() throws {
        let dir = TemporaryDirectory("file-order")
        let store = try MappedKV(id: "s", directory: dir.path, configuration: Configuration(expectedCapacity: 1 << 20))
        // Enough keys for the radix sort, rewritten out of order so that file order differs from key order.
        let keys = (0..<500).map { "k\(($0 * 7919) % 500)" }
        for key in keys { try store.set(key, forKey: key) }
        for key in keys.prefix(100).reversed() { try store.set(key + "!", forKey: key) }
        var seen: [String] = []
        var seenInPlace: [String] = []
        var payloadsMatch = true
        try store.withExclusiveLock { transaction in
            try transaction.forEachEntry { key, _ in seen.append(key) }
            // The walk without a list: the same entries in the same order, each with its own value.
            try transaction.forEachRawEntryInPlace { key, payload in
                let text = String(decoding: key, as: UTF8.self)
                seenInPlace.append(text)
                let value = String(decoding: payload.dropFirst(), as: UTF8.self)
                payloadsMatch = payloadsMatch && (value == text || value == text + "!")
            }
        }
        let expected = Array(keys.dropFirst(100)) + keys.prefix(100).reversed()
        #expect(seen == expected)
        #expect(seenInPlace == expected && payloadsMatch)
    }

    @Test(arguments: [0..<33, 0..<64, 1..<25, 40..<52, 63..<64])
    func theRadixSortAgreesWithAStableComparisonSort(bits: Range<Int>) {
        var generator = SystemRandomNumberGenerator()
        let mask: UInt64 = bits.count == 64 ? .max : (1 << UInt64(bits.count)) - 1
        for count in [0, 1, 255, 256, 257, 1_000, 20_000] {
            // Few distinct keys in the range, so that stability is tested too.
            let words = (0..<count).map { _ in
                UInt64.random(in: 0...UInt64.max, using: &generator) & ~(mask << UInt64(bits.lowerBound))
                    | (UInt64.random(in: 0...7, using: &generator) & mask) << UInt64(bits.lowerBound)
            }
            let expected = words.enumerated().sorted { a, b in
                let keyA = (a.element >> UInt64(bits.lowerBound)) & mask
                let keyB = (b.element >> UInt64(bits.lowerBound)) & mask
                return keyA != keyB ? keyA < keyB : a.offset < b.offset
            }.map(\.element)
            var sorted = words
            RadixSort.sort(&sorted, byBits: bits)
            #expect(sorted == expected, "\(count) words by bits \(bits)")
        }
    }
}
