// The read path's shortcut parser of a manifest record against the full one.
//
// Invariant: whatever `CacheEntryRecordView.liveInlineValue(in:at:)` accepts, the full parser
// accepts too, as a live inline record with the same value range and CRC; and it accepts every
// live inline record the full parser accepts. Checked on well-formed records of every shape and
// on random damage to them (truncation, flipped bits, spliced bytes), with the seed printed.

import MappedKVFormat
import Testing

@testable import MappedKVCache

@Suite("CacheEntryRecordView")
struct CacheEntryRecordViewTests {
    /// A record of each shape: inline or file, with or without expiry and extended data.
    static func records(now: UInt64) -> [[UInt8]] {
        var records: [[UInt8]] = []
        for inline in [true, false] {
            for expiry in [nil, now - 1, now + 1, UInt64.max] as [UInt64?] {
                for extendedData in [nil, [], [1, 2, 3]] as [[UInt8]?] {
                    for size in [0, 1, 127, 128, 300] {
                        let value = (0..<size).map { UInt8(truncatingIfNeeded: $0 &* 31) }
                        let record = CacheEntryRecord(
                            size: size, crc: value.withUnsafeBytes { CRC32.update(0, $0) }, modified: now - 5_000,
                            expiry: expiry, extendedData: extendedData,
                            location: inline ? .inline(value) : .file(name: "0123456789abcdef0123456789abcdef"))
                        records.append(record.encoded)
                    }
                }
            }
        }
        return records
    }

    /// The shortcut's verdict and the full parser's, as comparable values.
    static func verdicts(_ raw: [UInt8], now: UInt64) -> (shortcut: [Int]?, full: [Int]?) {
        raw.withUnsafeBytes { raw in
            let shortcut = CacheEntryRecordView.liveInlineValue(in: raw, at: now).map { found in
                // An inline value ends the record.
                [raw.count - found.value.count, found.value.count, Int(found.crc)]
            }
            let full = CacheEntryRecordView(raw).flatMap { view -> [Int]? in
                guard view.isInline, !view.isExpired(at: now) else { return nil }
                return [view.payload.lowerBound, view.payload.count, Int(view.crc)]
            }
            return (shortcut, full)
        }
    }

    @Test func agreesWithTheFullParserOnEveryShape() {
        let now: UInt64 = 1_800_000_000_000
        let records = Self.records(now: now)
        var live = 0
        for raw in records {
            let (shortcut, full) = Self.verdicts(raw, now: now)
            #expect(shortcut == full, "record \(raw)")
            if full != nil { live += 1 }
        }
        // Inline and not expired: 3 expiries of 4 (none, later, never), 3 extended data, 5 sizes.
        #expect(live == 3 * 3 * 5)
    }

    @Test func agreesWithTheFullParserOnDamagedRecords() {
        let now: UInt64 = 1_800_000_000_000
        let records = Self.records(now: now)
        let seed = UInt64.random(in: 0...UInt64.max)
        var generator = DiskTestRandom(seed: seed)
        for _ in 0..<20_000 {
            var raw = records[Int(generator.next() % UInt64(records.count))]
            switch generator.next() % 3 {
            case 0: raw.removeLast(Int(generator.next() % UInt64(raw.count + 1)))
            case 1 where !raw.isEmpty:
                raw[Int(generator.next() % UInt64(raw.count))] ^= UInt8(1 << (generator.next() % 8))
            default:
                let at = Int(generator.next() % UInt64(raw.count + 1))
                raw.insert(contentsOf: [0xFF, 0x80, 0x01].prefix(Int(generator.next() % 4)), at: at)
            }
            let (shortcut, full) = Self.verdicts(raw, now: now)
            // The shortcut may not serve what the full parser refuses; both serve the same bytes.
            if shortcut != full {
                let verdicts = "\(String(describing: shortcut)) against \(String(describing: full))"
                Issue.record("seed \(seed): the parsers disagree on \(raw): \(verdicts)")
                return
            }
        }
    }
}
