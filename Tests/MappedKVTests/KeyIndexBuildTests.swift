import Foundation
import MappedKVFormat
import Testing

@testable import MappedKV

/// The one-go build of a whole region (sort by hash, keep each key's last record, fill front to
/// back) against the record-by-record filing of the same records and against a dictionary model.
@Suite struct KeyIndexBuildTests {
    /// A region of random records: sets and deletions of keys that collide on purpose (few
    /// keys), keys that are not UTF-8 and valid keys equal to their repair.
    static func randomRegion(seed: UInt64, records: Int) -> (mirror: [UInt8], model: [[UInt8]: [UInt8]]) {
        var random = SplitMix64(seed: seed)
        var keys: [[UInt8]] = (0..<(records / 4 + 1)).map { Array("key-\($0)".utf8) }
        keys += [[0xFF], [0xC3], Array("\u{FFFD}".utf8), [0x61, 0xFF], Array("a\u{FFFD}".utf8)]
        var mirror: [UInt8] = [0]  // a one-byte item-size holder
        var model: [[UInt8]: [UInt8]] = [:]
        /// The key the index files a record under: its bytes, or their repair.
        func effective(_ key: [UInt8]) -> [UInt8] { Array(String(decoding: key, as: UTF8.self).utf8) }
        for step in 0..<records {
            let key = keys[Int(random.next() % UInt64(keys.count))]
            if random.next() % 4 == 0 {
                key.withUnsafeBytes { Record.appendDeletion(key: $0, to: &mirror) }
                model[effective(key)] = nil
            } else {
                let value = [UInt8](repeating: UInt8(truncatingIfNeeded: step), count: 1 + step % 7)
                key.withUnsafeBytes { k in value.withUnsafeBytes { Record.append(key: k, value: $0, to: &mirror) } }
                model[effective(key)] = value
            }
        }
        return (mirror, model)
    }

    @Test(arguments: [(UInt64(1), 50), (2, 300), (3, 5_000), (4, 40_000)])
    func theBuildMatchesFilingRecordByRecord(seed: UInt64, records: Int) {
        let (mirror, model) = Self.randomRegion(seed: seed, records: records)
        var built = KeyIndex(hasher: KeyHasher(seed: seed))
        let builtResult = built.decodeRecords(of: mirror, from: 0)
        var filed = KeyIndex(hasher: KeyHasher(seed: seed))
        let filedResult = filed.decodeRecords(of: mirror, from: 1)  // past the holder: the incremental path
        #expect(builtResult.summary.isComplete && filedResult.summary.isComplete)
        #expect(builtResult.summary.recordCount == records)
        #expect(builtResult.hasNonUTF8Key == filedResult.hasNonUTF8Key)
        #expect(built.count == model.count && filed.count == model.count)
        #expect(built.recordBytes == filed.recordBytes)
        #expect(built.repairedCount == filed.repairedCount)
        mirror.withUnsafeBytes { bytes in
            for (key, value) in model {
                let slot = key.withUnsafeBytes { k in
                    built.slot(for: k, in: bytes) ?? built.repairedSlot(for: k, in: bytes)
                }
                #expect(slot.map { Array(bytes[$0.valueRange]) } == value, "key \(key)")
                let other = key.withUnsafeBytes { k in
                    filed.slot(for: k, in: bytes) ?? filed.repairedSlot(for: k, in: bytes)
                }
                #expect(other == slot)
            }
            var liveBytes = 0
            built.forEachSlot(in: bytes) { liveBytes += $0.recordRange.count }
            #expect(built.recordBytes == liveBytes)
        }
    }

    @Test func theBuiltIndexKeepsWorkingForSetsAndRemoves() {
        var (mirror, model) = Self.randomRegion(seed: 9, records: 3_000)
        var index = KeyIndex(hasher: KeyHasher(seed: 9))
        _ = index.decodeRecords(of: mirror, from: 0)
        for i in 0..<2_000 {
            let key = Array("key-\(i % 900)".utf8)
            if i % 3 == 0 {
                let removed = mirror.withUnsafeBytes { bytes in key.withUnsafeBytes { index.remove($0, in: bytes) } }
                #expect((removed != nil) == (model.removeValue(forKey: key) != nil))
            } else {
                let start = mirror.count
                let value: [UInt8] = [UInt8(truncatingIfNeeded: i), 1]
                key.withUnsafeBytes { k in value.withUnsafeBytes { Record.append(key: k, value: $0, to: &mirror) } }
                _ = mirror.withUnsafeBytes { bytes in
                    RecordDecoder.decode(bytes, from: start, skipsHolder: false) {
                        index.update(ValueSlot($0), in: bytes)
                    }
                }
                model[key] = value
            }
        }
        #expect(index.count == model.count)
        mirror.withUnsafeBytes { bytes in
            for (key, value) in model {
                let slot = key.withUnsafeBytes { k in
                    index.slot(for: k, in: bytes) ?? index.repairedSlot(for: k, in: bytes)
                }
                #expect(slot.map { Array(bytes[$0.valueRange]) } == value)
            }
        }
    }

    @Test func sortingByHashKeepsFileOrderAmongEqualHashes() {
        var random = SplitMix64(seed: 5)
        for count in [0, 1, 2, 200, 257, 10_000] {
            // Few distinct hashes, so that ties are common; starts ascending, as a load makes them.
            var words: [UInt64] = (0..<count).map { start in
                (random.next() % 64) << 40 | UInt64(start) | (random.next() % 2 == 0 ? 1 << 32 : 0)
            }
            let expected = words.enumerated().sorted { a, b in
                (a.element >> 33, a.offset) < (b.element >> 33, b.offset)
            }.map(\.element)
            RadixSort.sort(&words, byBits: 33..<64)
            #expect(words == expected, "count \(count)")
        }
    }
}
