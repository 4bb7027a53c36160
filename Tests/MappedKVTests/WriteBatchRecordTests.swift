import Foundation
import MappedKVFormat
import Testing

@testable import MappedKV

/// A batch encodes each operation's record as it is recorded, and a commit copies those records
/// into the region as they are when they need nothing added: the records must be byte for byte
/// the ones single sets and removes write, for every length of key and payload header.
@Suite("Write batch records")
struct WriteBatchRecordTests {
    /// Keys and payloads on either side of the one- and two-byte varint lengths.
    static let keys = ["k", String(repeating: "a", count: 127), String(repeating: "b", count: 128)]
    static let payloadLengths = [1, 126, 127, 128, 129, 16_383, 16_384, 70_000]

    /// The data file's records: the used bytes after the 4-byte length and the item size holder
    /// (a random value of each store's own).
    private func records(of store: MappedKV, at path: String) throws -> [UInt8] {
        let used = try store.actualSize
        let start = 4 + ItemSizeHolder.encodedLength
        return Array(try Data(contentsOf: URL(fileURLWithPath: path)).prefix(4 + used).dropFirst(start))
    }

    @Test("batched sets of every header length write the bytes single sets write", arguments: [false, true])
    func batchedRecordsMatchSingleWrites(withRemoves: Bool) throws {
        let dir = TemporaryDirectory("batch-records")
        // Room for everything from the start, so that neither store grows or compacts: the single
        // sets append one record each, as the batch appends all of them.
        var configuration = Configuration()
        configuration.expectedCapacity = 1 << 22
        let single = try MappedKV(id: "single", directory: dir.path, configuration: configuration)
        let batched = try MappedKV(id: "batched", directory: dir.path, configuration: configuration)
        // Present before the batch, so that its removes write deletion records.
        for store in [single, batched] { try store.set(Int32(7), forKey: "present") }
        var values: [(key: String, value: [UInt8])] = []
        for key in Self.keys {
            for length in Self.payloadLengths {
                values.append(
                    (key + "-\(length)", (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ key.count) }))
            }
        }
        try batched.batch { batch in
            for (key, value) in values { try batch.set(value, forKey: key) }
            try batch.set("a string", forKey: "k")
            if withRemoves {
                try batch.removeValue(forKey: "present")
                try batch.removeValue(forKey: "absent")
            }
        }
        for (key, value) in values { try single.set(value, forKey: key) }
        try single.set("a string", forKey: "k")
        if withRemoves { try single.removeValue(forKey: "present") }

        #expect(try single.info().meta.sequence == batched.info().meta.sequence, "neither store wrote back")
        let batchedRecords = try records(of: batched, at: dir.path + "/batched")
        #expect(batchedRecords.count > 300_000)
        #expect(batchedRecords == (try records(of: single, at: dir.path + "/single")))
        batched.close()
        let reopened = try MappedKV(id: "batched", directory: dir.path)
        for (key, value) in values { #expect(try reopened.bytes(forKey: key) == value, "\(key)") }
        #expect(try reopened.string(forKey: "k") == "a string")
        #expect(try reopened.contains("present") == !withRemoves)
    }

    @Test("batched numbers and strings, encoded in place, write the bytes single sets write")
    func batchedScalarsMatchSingleWrites() throws {
        let dir = TemporaryDirectory("batch-scalars")
        var configuration = Configuration()
        configuration.expectedCapacity = 1 << 20
        let single = try MappedKV(id: "single", directory: dir.path, configuration: configuration)
        let batched = try MappedKV(id: "batched", directory: dir.path, configuration: configuration)
        // Varint boundaries, negatives (ten bytes), and strings on either side of a two-byte length.
        let int32s: [Int32] = [0, 1, 127, 128, 16_383, 16_384, .max, -1, .min]
        let int64s: [Int64] = [0, 127, 128, 1 << 35, .max, -1, .min]
        let uint64s: [UInt64] = [0, 127, 128, .max]
        let doubles: [Double] = [0, -0.0, 1.5, .infinity, .nan, .leastNonzeroMagnitude]
        let strings = ["", "a", String(repeating: "x", count: 126), String(repeating: "y", count: 127), "ünï"]
        func write(_ store: MappedKV, batch: MappedKV.WriteBatch?) throws {
            func set(_ value: some PayloadCodable & Sendable & Encodable, _ key: String) throws {
                if let batch { try batch.set(value, forKey: key) } else { try store.set(value, forKey: key) }
            }
            for (i, value) in int32s.enumerated() { try set(value, "i32-\(i)") }
            for (i, value) in int64s.enumerated() { try set(value, "i64-\(i)") }
            for (i, value) in uint64s.enumerated() { try set(value, "u64-\(i)") }
            for (i, value) in doubles.enumerated() { try set(value, "d-\(i)") }
            for (i, value) in strings.enumerated() { try set(value, "s-\(i)") }
            try set(true, "bool")
            try set(Float(-2.5), "float")
            try set(UInt32.max, "u32")
            try set(Int(-7), "int")
        }
        try batched.batch { batch in try write(batched, batch: batch) }
        try write(single, batch: nil)
        let batchedRecords = try records(of: batched, at: dir.path + "/batched")
        #expect(batchedRecords.count > 500)
        #expect(batchedRecords == (try records(of: single, at: dir.path + "/single")))
        batched.close()
        let reopened = try MappedKV(id: "batched", directory: dir.path)
        for (i, value) in int32s.enumerated() { #expect(try reopened.int32(forKey: "i32-\(i)") == value) }
        for (i, value) in strings.enumerated() { #expect(try reopened.string(forKey: "s-\(i)") == value) }
        #expect(try reopened.value(forKey: "d-4", as: Double.self)?.isNaN == true)
    }

    @Test("with key expiry on, batched values of every header length read back whole after a reopen")
    func expiringRecordsOfEveryLength() throws {
        let dir = TemporaryDirectory("batch-records-expiry")
        let store = try MappedKV(id: "s", directory: dir.path)
        try store.enableKeyExpiry(defaultDuration: .seconds(3_600))
        try store.batch { batch in
            for key in Self.keys {
                for length in Self.payloadLengths {
                    try batch.set([UInt8](repeating: UInt8(length % 251), count: length), forKey: key + "-\(length)")
                }
            }
        }
        store.close()
        let reopened = try MappedKV(id: "s", directory: dir.path)
        for key in Self.keys {
            for length in Self.payloadLengths {
                #expect(
                    try reopened.bytes(forKey: key + "-\(length)")
                        == [UInt8](repeating: UInt8(length % 251), count: length))
            }
        }
    }

    @Test(
        "random batches of sets only (filed in one pass) agree with a dictionary, through growth, repeats and a reopen",
        arguments: [1, 2, 3] as [UInt64])
    func setOnlyBatchesAgreeWithAModel(seed: UInt64) throws {
        let dir = TemporaryDirectory("batch-sets-model")
        let store = try MappedKV(id: "s", directory: dir.path)
        var model: [String: Int32] = [:]
        var rng = SplitMix64(seed: seed)
        // The first batches grow the index several times each; later ones overwrite keys, some
        // more than once within one batch.
        for round in 0..<80 {
            let size = Int.random(in: 1...(round < 8 ? 300 : 40), using: &rng)
            try store.batch { batch in
                for _ in 0..<size {
                    let key = "key-\(Int.random(in: 0..<900, using: &rng))"
                    let value = Int32.random(in: .min ... .max, using: &rng)
                    try batch.set(value, forKey: key)
                    model[key] = value
                }
            }
        }
        // The index's counts, which compaction relies on, agree with the live records.
        let liveBytes = model.reduce(0) { total, entry in
            total + Record.encodedSize(keyLength: entry.key.utf8.count, valueLength: entry.value.payloadBytes.count)
        }
        let (keys, bytes) = try store.withCore { core in (core.loaded.index.count, core.loaded.index.recordBytes) }
        #expect(keys == model.count, "seed \(seed)")
        #expect(bytes == liveBytes, "seed \(seed)")
        func check(_ store: MappedKV, _ when: String) throws {
            #expect(try store.count == model.count, "seed \(seed) \(when)")
            for index in 0..<900 {
                let key = "key-\(index)"
                #expect(try store.int32(forKey: key) == model[key], "seed \(seed) \(when): \(key)")
            }
        }
        try check(store, "after the batches")
        try store.trim()
        try check(store, "after a trim")
        store.close()
        try check(try MappedKV(id: "s", directory: dir.path), "after a reopen")
    }

    @Test("a copied batch keeps its records while the original records more or is emptied")
    func copiesAreIndependent() throws {
        var original = BatchOperations()
        try original.recordSet(Int32(1), forKey: "a")
        let copy = original
        try original.recordSet(Int32(2), forKey: "b")
        // varint(1) "a" varint(1) varint(1)
        #expect(copy.count == 1 && Array(copy.records) == [1, 0x61, 1, 1])
        #expect(original.count == 2 && Array(original.records) == [1, 0x61, 1, 1, 1, 0x62, 1, 2])
        var emptied = copy
        emptied.removeAll()
        #expect(emptied.isEmpty && emptied.records.isEmpty)
        #expect(Array(copy.records) == [1, 0x61, 1, 1])
        original.removeAll()
        try original.recordSet(Int32(3), forKey: "c")
        #expect(Array(copy.records) == [1, 0x61, 1, 1])
    }
}
