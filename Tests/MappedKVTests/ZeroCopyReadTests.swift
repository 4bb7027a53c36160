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

    /// The package's batched reads (a page of collection entries) against single reads of the
    /// same keys: present, absent, expired, several bytes a character, and keys that are not UTF-8
    /// reached by the name their repair gives them.
    /// `seed` orders the stored keys among the names read.
    @Test(arguments: [1, 2, 3] as [UInt64])
    func batchedPayloadReadsAgreeWithSingleReads(seed: UInt64) throws {
        let dir = TemporaryDirectory("batched-reads")
        // A record "a\xFF" = 7 written by MMKV's C++ API, then the store's own keys.
        try PlausibilityTests().writeStore(dir, region: [0x00, 0x02, 0x61, 0xFF, 0x01, 0x07], key: nil)
        let clock = ManualClock(1_700_000_000)
        let store = try MappedKV(id: "s", directory: dir.path, configuration: Configuration(clock: clock.expiryClock))
        try store.enableKeyExpiry()
        var stored: [String] = []
        for number in 0..<300 {
            let key = number % 3 == 0 ? "k\(number)" : number % 3 == 1 ? "ключ-\(number)" : "\u{2}5:posts p\(number)"
            try store.set([UInt8](repeating: UInt8(number & 0xFF), count: number % 40), forKey: key)
            stored.append(key)
        }
        try store.set("soon gone", forKey: "short", expiresAfter: .seconds(5))
        try store.set("still here", forKey: "long", expiresAfter: .seconds(500))
        clock.advance(5)
        var random = SplitMix64(seed: seed)
        let names = ["a\u{FFFD}", "short", "long", "absent", ""] + stored.shuffled(using: &random) + ["k1", "k3"]
        for count in [0, 1, 2, names.count] {
            let keys = Array(names.prefix(count))
            var packed = PackedKeys(reservingCapacity: keys.count, bytesPerKey: 8)
            for key in keys { packed.append(UnsafeRawBufferPointer(start: nil, count: 0), key) }
            let single = try keys.map { try store.payload(forKey: $0) }
            let copied = try store.payloads(forKeys: packed)
            var lent: [[UInt8]?] = []
            var positions: [Int] = []
            try store.withPayloads(forKeys: packed) { position, payload in
                positions.append(position)
                lent.append(payload.map { Array($0) })
            }
            #expect(positions == Array(keys.indices), "seed \(seed), \(count) keys")
            try #require(copied.count == keys.count && lent.count == keys.count, "seed \(seed), \(count) keys")
            let differing = keys.indices.filter { copied[$0] != single[$0] || lent[$0] != single[$0] }
            #expect(
                differing.isEmpty,
                "seed \(seed): keys read differently in a batch: \(differing.prefix(5).map { keys[$0] })")
        }
        #expect(try store.payload(forKey: "a\u{FFFD}") == [0x07], "the repaired key is among those read")
        #expect(try store.payload(forKey: "short") == nil && store.payload(forKey: "long") != nil)
        // The head and tail of a packed key are one key.
        var joined = PackedKeys(reservingCapacity: 1, bytesPerKey: 8)
        Array("ключ-".utf8).withUnsafeBytes { joined.append($0, "1") }
        #expect(try store.payloads(forKeys: joined) == [try store.payload(forKey: "ключ-1")])
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

    @Test(arguments: [0..<33, 0..<64, 1..<25, 40..<52, 63..<64], [1, 2] as [UInt64])
    func theRadixSortAgreesWithAStableComparisonSort(bits: Range<Int>, seed: UInt64) {
        var generator = SplitMix64(seed: seed)
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
            #expect(sorted == expected, "seed \(seed): \(count) words by bits \(bits)")
        }
    }
}

/// The package's bytes-keyed calls that MappedKVCache's manifest uses: a get by key bytes, and a
/// set that shows the value it replaces and runs the caller's bookkeeping once the record is in.
@Suite("Bytes-keyed reads and replacing sets")
struct BytesKeyedCallTests {
    @Test func aGetByKeyBytesAgreesWithAGetByString() throws {
        let dir = TemporaryDirectory("key-bytes-get")
        let store = try MappedKV(id: "s", directory: dir.path)
        try store.set([1, 2, 3], forKey: "e:ключ")
        try store.set(Int32(7), forKey: "number")
        func read(_ key: String) throws -> [UInt8]? {
            var found: [UInt8]?
            try Array(key.utf8).withUnsafeBytes { key in
                try store.withBytes(forKeyBytes: key) { found = $0.map { Array($0) } }
            }
            return found
        }
        #expect(try read("e:ключ") == [1, 2, 3])
        #expect(try read("absent") == nil)
        #expect(throws: MappedKVError.self) { _ = try read("number") }
    }

    @Test func aReplacingSetShowsTheReplacedValueAndRunsItsBookkeepingOnce() throws {
        let dir = TemporaryDirectory("replace-bytes")
        let store = try MappedKV(
            id: "s", directory: dir.path, configuration: Configuration(isMultiProcess: true))
        func replace(_ key: String, with value: [UInt8]) throws -> (seen: [UInt8]??, recorded: Int) {
            var seen: [UInt8]??
            var recorded = 0
            try Array(key.utf8).withUnsafeBytes { key in
                try store.replaceBytes(
                    forKeyBytes: key, length: value.count,
                    examining: { current in seen = .some(current.map { Array($0) }) },
                    writing: { target in target.copyBytes(from: value) },
                    recorded: { recorded += 1 })
            }
            return (seen, recorded)
        }
        let first = try replace("k", with: [9, 8, 7])
        #expect(first.seen == .some(nil))
        #expect(first.recorded == 1)
        #expect(try store.bytes(forKey: "k") == [9, 8, 7])
        let second = try replace("k", with: Array(repeating: 5, count: 300))
        #expect(second.seen == .some([9, 8, 7]))
        #expect(try store.bytes(forKey: "k") == Array(repeating: 5, count: 300))
        // A value that is not a bytes value is shown as absent, and replaced all the same.
        try store.set(Int32(7), forKey: "number")
        #expect(try replace("number", with: [1]).seen == .some(nil))
        #expect(try store.bytes(forKey: "number") == [1])
        // Reopened: the records are on file, not only in this handle's memory.
        store.close()
        let reopened = try MappedKV(
            id: "s", directory: dir.path, configuration: Configuration(isMultiProcess: true))
        #expect(try reopened.bytes(forKey: "k") == Array(repeating: 5, count: 300))
        #expect(try reopened.bytes(forKey: "number") == [1])
    }

    /// The replaced value is read through the slot the index hands back after the append: it must
    /// be the old value even when the set had to compact or grow the file first, and an expired
    /// one must be shown as absent.
    @Test func aReplacingSetShowsTheReplacedValueAcrossWriteBacksAndExpiry() throws {
        let dir = TemporaryDirectory("replace-bytes-write-back")
        let clock = ManualClock(1_000_000)
        let store = try MappedKV(
            id: "s", directory: dir.path,
            configuration: Configuration(isMultiProcess: true, clock: clock.expiryClock))
        func replace(_ key: String, with value: [UInt8]) throws -> [UInt8]?? {
            var seen: [UInt8]??
            try Array(key.utf8).withUnsafeBytes { key in
                try store.replaceBytes(
                    forKeyBytes: key, length: value.count,
                    examining: { current in seen = .some(current.map { Array($0) }) },
                    writing: { target in target.copyBytes(from: value) }, recorded: {})
            }
            return seen
        }
        // Enough replacing sets of growing values to force several write-backs and growths; each
        // must see exactly the value before it.
        var previous: [UInt8]?
        for round in 0..<400 {
            let value = (0..<(round * 37 % 3_000)).map { UInt8(truncatingIfNeeded: $0 &+ round) }
            #expect(try replace("k", with: value) == .some(previous), "round \(round)")
            previous = value
        }
        // With key expiry on, a value whose lifetime has run out is shown as absent.
        try store.enableKeyExpiry()
        try store.set([4, 5, 6], forKey: "short", expiresAfter: .seconds(5))
        try store.set([7, 8], forKey: "long", expiresAfter: .seconds(600))
        clock.advance(6)
        #expect(try replace("short", with: [1]) == .some(nil))
        #expect(try replace("long", with: [2]) == .some([7, 8]))
        #expect(try store.bytes(forKey: "short") == [1])
    }
}
