import Foundation
import MappedKVFormat
import Testing

@testable import MappedKV

/// The index against a `Dictionary` model, and the store-level effects of its design: records
/// keep their order through a compaction, and a store with no dead records grows without a rewrite.
@Suite struct KeyIndexTests {
    /// A mirror of records built by appending, as the store does, with the index kept beside it.
    struct Harness {
        var mirror: [UInt8] = [0]  // a one-byte item-size holder
        var index: KeyIndex

        init(hasher: KeyHasher) { index = KeyIndex(hasher: hasher) }

        mutating func set(_ key: [UInt8], _ value: [UInt8]) {
            let start = mirror.count
            Varint.append(UInt64(key.count), to: &mirror)
            let keyStart = mirror.count
            mirror.append(contentsOf: key)
            Varint.append(UInt64(value.count), to: &mirror)
            let valueStart = mirror.count
            mirror.append(contentsOf: value)
            let slot = ValueSlot(
                keyStart: UInt32(keyStart), valueStart: UInt32(valueStart), valueLength: UInt32(value.count),
                keyLength: UInt16(key.count), keyOffset: UInt8(keyStart - start))
            mirror.withUnsafeBytes { _ = index.update(slot, in: $0) }
        }

        mutating func remove(_ key: [UInt8]) -> Bool {
            mirror.withUnsafeBytes { bytes in key.withUnsafeBytes { index.remove($0, in: bytes) } } != nil
        }

        func value(_ key: [UInt8]) -> [UInt8]? {
            mirror.withUnsafeBytes { bytes in
                key.withUnsafeBytes { index.slot(for: $0, in: bytes) }.map { Array(bytes[$0.valueRange]) }
            }
        }
    }

    @Test(arguments: [UInt64(1), 0xDEAD_BEEF, 42])
    func matchesADictionaryUnderRandomOperations(seed: UInt64) {
        var random = SplitMix64(seed: seed)
        var harness = Harness(hasher: KeyHasher(seed: seed))
        var model: [[UInt8]: [UInt8]] = [:]
        // Keys of every length class the hash reads differently: 1-3, 4-7, 8-16 and longer bytes.
        let keys: [[UInt8]] = (0..<3_000).map { i in
            let length = [1, 2, 3, 5, 7, 8, 12, 16, 17, 31, 64, 300][i % 12]
            return (0..<length).map { _ in UInt8(truncatingIfNeeded: random.next()) }
        }
        for step in 0..<40_000 {
            let key = keys[Int(random.next() % UInt64(keys.count))]
            if random.next() % 3 == 0 {
                #expect(harness.remove(key) == (model.removeValue(forKey: key) != nil), "remove at step \(step)")
            } else {
                let value = [UInt8](repeating: UInt8(step % 251), count: 1 + step % 5)
                harness.set(key, value)
                model[key] = value
            }
            if step % 1_000 == 0 {
                #expect(harness.index.count == model.count)
                for (key, value) in model { #expect(harness.value(key) == value) }
            }
        }
        #expect(harness.index.count == model.count)
        for key in keys { #expect(harness.value(key) == model[key]) }
        var liveBytes = 0
        harness.mirror.withUnsafeBytes { bytes in
            harness.index.forEachSlot(in: bytes) { liveBytes += $0.recordRange.count }
        }
        #expect(harness.index.recordBytes == liveBytes)
    }

    @Test func keysThatDifferOnlyInTheirLastByteOrLengthStayApart() {
        var harness = Harness(hasher: KeyHasher(seed: 7))
        let keys: [[UInt8]] = [
            [0], [0, 0], [0, 0, 0], Array(repeating: 0, count: 8), Array(repeating: 0, count: 9),
            Array(repeating: 0, count: 16), Array(repeating: 0, count: 17), Array(repeating: 0, count: 15) + [1],
        ]
        for (i, key) in keys.enumerated() { harness.set(key, [UInt8(i + 1)]) }
        for (i, key) in keys.enumerated() { #expect(harness.value(key) == [UInt8(i + 1)]) }
        #expect(harness.index.count == keys.count)
    }

    @Test func byteComparisonSeesADifferenceAtEveryPosition() {
        for length in 1...40 {
            let key = (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ 11) }
            let copy = Array(key)
            key.withUnsafeBytes { a in
                guard let a = a.baseAddress else { return }
                copy.withUnsafeBytes { #expect(KeyIndex.bytesEqual(a, $0.baseAddress!, length), "length \(length)") }
                for position in 0..<length {
                    var other = key
                    other[position] ^= 0x40
                    other.withUnsafeBytes { b in
                        #expect(!KeyIndex.bytesEqual(a, b.baseAddress!, length), "length \(length), byte \(position)")
                    }
                }
            }
        }
    }

    @Test func keysAndValuesOnEitherSideOfOneByteLengthsReadBack() {
        // A lookup reads one-byte length headers without the general decoder; longer keys and
        // values (two-byte varints) take the general path.
        var harness = Harness(hasher: KeyHasher(seed: 11))
        var expected: [[UInt8]: [UInt8]] = [:]
        for keyLength in [1, 7, 8, 9, 16, 17, 127, 128, 129, 300] {
            for valueLength in [1, 127, 128, 129, 300] {
                let key = (0..<keyLength).map { UInt8(truncatingIfNeeded: $0 &+ valueLength) }
                let value = (0..<valueLength).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ keyLength) }
                harness.set(key, value)
                expected[key] = value
            }
        }
        for (key, value) in expected { #expect(harness.value(key) == value, "key of \(key.count) bytes") }
        #expect(harness.value(Array(repeating: 1, count: 9)) == nil)
    }

    @Test func sequentialKeysSpreadOverTheTable() {
        var harness = Harness(hasher: KeyHasher())
        for i in 0..<100_000 { harness.set(Array("int-\(i)".utf8), [1]) }
        #expect(harness.index.count == 100_000)
        // At most 3/4 full with a hash that spreads keys, runs stay short; a weak hash on keys
        // that share a prefix would pile them into long runs.
        #expect(harness.index.longestRun < 200, "longest run \(harness.index.longestRun)")
    }

    @Test func aCompactionKeepsRecordsInTheOrderTheyWereWritten() throws {
        let dir = TemporaryDirectory("index-order")
        let store = try MappedKV(id: "s", directory: dir.path)
        for i in 0..<2_000 { try store.set(Int32(i), forKey: "k\(i)") }
        for i in stride(from: 0, to: 2_000, by: 2) { try store.removeValue(forKey: "k\(i)") }
        let sequence = try store.info().meta.sequence
        try store.trim()
        #expect(try store.info().meta.sequence > sequence, "trim compacted")
        let data = try #require(fileBytes(dir.file("s")))
        let size = Int(try store.info().meta.actualSize)
        var order: [String] = []
        _ = Array(data[4..<(4 + size)]).withUnsafeBytes { bytes in
            RecordDecoder.decode(bytes, skipsHolder: true) {
                order.append(String(decoding: bytes[$0.keyRange], as: UTF8.self))
            }
        }
        #expect(order == stride(from: 1, to: 2_000, by: 2).map { "k\($0)" })
    }

    @Test func aStoreOfLiveRecordsGrowsWithoutARewrite() throws {
        let dir = TemporaryDirectory("index-grow")
        let store = try MappedKV(id: "s", directory: dir.path)
        try store.set(Int32(0), forKey: "k0")
        var growths = 0
        for i in 1..<5_000 {
            let before = try #require(fileBytes(dir.file("s")))
            let meta = try store.info().meta
            try store.set(Int32(i), forKey: "k\(i)")
            let after = try #require(fileBytes(dir.file("s")))
            guard after.count != before.count else { continue }
            growths += 1
            #expect(after.count > before.count)
            #expect(
                try store.info().meta.sequence == meta.sequence &+ 1,
                "growth tells other processes through the sequence")
            let written = 4..<(4 + Int(meta.actualSize))
            #expect(after[written] == before[written], "the records written before the growth stay where they were")
        }
        #expect(growths >= 3)
        store.close()
        let reopened = try MappedKV(id: "s", directory: dir.path)
        for i in 0..<5_000 { #expect(try reopened.int32(forKey: "k\(i)") == Int32(i)) }
    }
}
