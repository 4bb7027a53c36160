import Foundation
import MappedKVFormat
import Testing

@testable import MappedKV

/// `MappedKV.batch`: sets and removes recorded on a `WriteBatch` are written as one append, in
/// order, or not at all; the compaction and growth paths, expiry, encryption and errors.
@Suite("Write batches")
struct WriteBatchTests {
    struct Profile: Codable, Equatable {
        var name: String
        var tags: [String]
    }

    @Test("sets of every payload kind and removes apply in order, as one append, and survive a reopen")
    func setsAndRemoves() throws {
        let dir = TemporaryDirectory("batch")
        let store = try MappedKV(id: "s", directory: dir.path)
        try store.set("old", forKey: "gone")
        try store.set(Int32(1), forKey: "again")
        let before = try store.info()
        let count = try store.batch { batch in
            try batch.set(Int32(-3), forKey: "int32")
            try batch.set(UInt64.max, forKey: "uint64")
            try batch.set(true, forKey: "bool")
            try batch.set(2.5, forKey: "double")
            try batch.set("text", forKey: "string")
            try batch.set([UInt8]([1, 2, 3]), forKey: "bytes")
            try batch.set(Data([9, 8]), forKey: "data")
            try batch.set(["a", "b"], forKey: "strings")
            try batch.set(Profile(name: "Ada", tags: ["x"]), forKey: "profile")
            try batch.removeValue(forKey: "gone")
            try batch.removeValue(forKey: "absent")
            try batch.removeValue(forKey: "again")
            try batch.set(Int32(2), forKey: "again")  // a later set of a removed key wins
            try batch.set("first", forKey: "twice")
            try batch.set("second", forKey: "twice")
            return batch.count
        }
        #expect(count == 15)
        let after = try store.info()
        #expect(after.meta.sequence == before.meta.sequence, "an append, not a write-back")
        // 12 set records + 2 deletions (the absent key writes nothing), after the 2 records before.
        #expect(after.recordCount == before.recordCount + 14)

        func check(_ store: MappedKV) throws {
            #expect(try store.int32(forKey: "int32") == -3)
            #expect(try store.uint64(forKey: "uint64") == UInt64.max)
            #expect(try store.bool(forKey: "bool") == true)
            #expect(try store.double(forKey: "double") == 2.5)
            #expect(try store.string(forKey: "string") == "text")
            #expect(try store.bytes(forKey: "bytes") == [1, 2, 3])
            #expect(try store.data(forKey: "data") == Data([9, 8]))
            #expect(try store.strings(forKey: "strings") == ["a", "b"])
            #expect(try store.value(forKey: "profile", as: Profile.self) == Profile(name: "Ada", tags: ["x"]))
            #expect(try store.int32(forKey: "again") == 2)
            #expect(try store.string(forKey: "twice") == "second")
            #expect(try !store.contains("gone"))
            #expect(try store.count == 11)
        }
        try check(store)
        store.close()
        try check(try MappedKV(id: "s", directory: dir.path))
    }

    @Test("a body that throws writes nothing; the handle is dead after the closure")
    func throwingBodyWritesNothing() throws {
        struct Stop: Error {}
        let dir = TemporaryDirectory("batch-throw")
        let store = try MappedKV(id: "s", directory: dir.path)
        try store.set("kept", forKey: "k")
        var escaped: MappedKV.WriteBatch?
        #expect(throws: Stop.self) {
            try store.batch { batch in
                escaped = batch
                try batch.set("new", forKey: "n")
                try batch.removeValue(forKey: "k")
                throw Stop()
            }
        }
        #expect(try store.allKeys == ["k"])
        #expect(throws: MappedKVError.self) { try escaped?.set("late", forKey: "late") }
        #expect(try store.allKeys == ["k"])
    }

    @Test("bad keys throw at the call; a failing commit writes nothing")
    func errors() throws {
        let dir = TemporaryDirectory("batch-errors")
        let store = try MappedKV(id: "s", directory: dir.path)
        try store.set("kept", forKey: "k")
        #expect(throws: MappedKVError.self) { try store.batch { batch in try batch.set("v", forKey: "") } }
        let long = String(repeating: "k", count: RecordLimits.maximumKeyLength + 1)
        #expect(throws: MappedKVError.self) { try store.batch { batch in try batch.removeValue(forKey: long) } }
        // An expiry on a store without key expiry fails at the commit, after other sets were recorded.
        #expect(throws: MappedKVError.self) {
            try store.batch { batch in
                try batch.set("a", forKey: "a")
                try batch.set("b", forKey: "b", expiresAfter: .seconds(5))
            }
        }
        #expect(try store.allKeys == ["k"])
        // An empty batch and a batch of absent removes write nothing.
        let size = try store.actualSize
        try store.batch { _ in }
        try store.batch { batch in try batch.removeValue(forKey: "absent") }
        #expect(try store.actualSize == size)
    }

    @Test("each batch starts empty: after a failed commit, and inside another batch's body")
    func batchesCarryNothingOver() throws {
        let dir = TemporaryDirectory("batch-reuse")
        let store = try MappedKV(id: "s", directory: dir.path)
        // The store keeps a batch's buffers for the next one; a failed commit must not leave its
        // operations in them.
        #expect(throws: MappedKVError.self) {
            try store.batch { batch in
                try batch.set("a", forKey: "a")
                try batch.set("b", forKey: "b", expiresAfter: .seconds(5))
            }
        }
        try store.batch { batch in try batch.set("c", forKey: "c") }
        #expect(try store.allKeys.sorted() == ["c"])
        // Nor its sizes: a failed batch of a large value leaves the next small batch sized as small.
        let sizeBefore = try store.totalSize
        #expect(throws: MappedKVError.self) {
            try store.batch { batch in
                try batch.set([UInt8](repeating: 7, count: 1 << 20), forKey: "large")
                try batch.set("b", forKey: "b", expiresAfter: .seconds(5))
            }
        }
        try store.batch { batch in try batch.set("c2", forKey: "c2") }
        #expect(try store.totalSize == sizeBefore)
        #expect(try store.allKeys.sorted() == ["c", "c2"])
        try store.batch { outer in
            try outer.set("d", forKey: "d")
            try store.batch { inner in try inner.set("e", forKey: "e") }
            #expect(try store.allKeys.sorted() == ["c", "c2", "e"])
            try outer.set("f", forKey: "f")
        }
        #expect(try store.allKeys.sorted() == ["c", "c2", "d", "e", "f"])
        try store.batch { batch in try batch.removeValue(forKey: "d") }
        #expect(try store.allKeys.sorted() == ["c", "c2", "e", "f"])
    }

    @Test("a batch that does not fit compacts or grows first, and still lands whole", arguments: [false, true])
    func largerThanTheFile(encrypted: Bool) throws {
        let dir = TemporaryDirectory("batch-room")
        let key = encrypted ? CryptKey(Array("batch-key".utf8)) : nil
        let store = try MappedKV(id: "s", directory: dir.path, configuration: Configuration(cryptKey: key))
        // Dead records to compact: the same keys set again and again.
        for round in 0..<40 { for i in 0..<10 { try store.set("r\(round)", forKey: "old\(i)") } }
        let fileSize = try store.totalSize
        let value = String(repeating: "v", count: 200)
        try store.batch { batch in
            for i in 0..<100 { try batch.set("\(i)-\(value)", forKey: "new\(i)") }
            for i in 0..<5 { try batch.removeValue(forKey: "old\(i)") }
        }
        #expect(try store.totalSize > fileSize)
        func check(_ store: MappedKV) throws {
            #expect(try store.count == 105)
            #expect(try store.string(forKey: "new99") == "99-\(value)")
            #expect(try store.string(forKey: "old9") == "r39")
            #expect(try !store.contains("old0"))
        }
        try check(store)
        // A removes-only batch that does not fit.
        try store.batch { batch in for i in 0..<100 { try batch.removeValue(forKey: "new\(i)") } }
        #expect(try store.count == 5)
        store.close()
        let reopened = try MappedKV(id: "s", directory: dir.path, configuration: Configuration(cryptKey: key))
        #expect(try reopened.allKeys == ["old5", "old6", "old7", "old8", "old9"])
    }

    @Test("with key expiry on, batch sets take the default or their own lifetime")
    func expiry() throws {
        let dir = TemporaryDirectory("batch-expiry")
        let clock = ManualClock(1_800_000_000)
        let store = try MappedKV(id: "s", directory: dir.path, configuration: Configuration(clock: clock.expiryClock))
        try store.enableKeyExpiry(defaultDuration: .seconds(100))
        try store.batch { batch in
            try batch.set(Int32(1), forKey: "default")
            try batch.set(Int32(2), forKey: "short", expiresAfter: .seconds(10))
            try batch.set(Profile(name: "p", tags: []), forKey: "never", expiresAfter: .zero)
        }
        clock.advance(11)
        #expect(try store.int32(forKey: "short") == nil)
        #expect(try store.int32(forKey: "default") == 1)
        clock.advance(100)
        #expect(try store.int32(forKey: "default") == nil)
        #expect(try store.value(forKey: "never", as: Profile.self) == Profile(name: "p", tags: []))
    }

    @Test("a batch inside an exclusive section on the same thread commits under the held lock")
    func insideExclusiveSection() throws {
        let dir = TemporaryDirectory("batch-section")
        let store = try MappedKV(id: "s", directory: dir.path, configuration: Configuration(isMultiProcess: true))
        try store.withExclusiveLock { tx in
            let n = try tx.int32(forKey: "n") ?? 0
            try store.batch { batch in
                try batch.set(n + 1, forKey: "n")
                try batch.set("x", forKey: "other")
            }
        }
        #expect(try store.int32(forKey: "n") == 1)
        #expect(try store.string(forKey: "other") == "x")
    }

    @Test("a large batch into an empty store sizes the file for its records, not for eight copies of the batch")
    func largeBatchesSizeTheFileByTheirRecords() throws {
        let dir = TemporaryDirectory("batch-size")
        let keys = (0..<20_000).map { "key-\($0)" }
        let oneByOne = try MappedKV(id: "single", directory: dir.path)
        for (i, key) in keys.enumerated() { try oneByOne.set(Int32(i), forKey: key) }
        let batched = try MappedKV(id: "batched", directory: dir.path)
        try batched.batch { batch in
            for (i, key) in keys.enumerated() { try batch.set(Int32(i), forKey: key) }
        }
        let imported = try MappedKV(id: "imported", directory: dir.path)
        try imported.importEntries(
            keys.enumerated().map { StoreEntry(key: $0.element, payload: Int32($0.offset).payloadBytes) })
        let expected = try oneByOne.totalSize
        // Counted as one record, a batch would reserve eight times its own size for future sets
        // (4 MiB here); counted by its records it gets the room one-by-one sets leave, within the
        // doubling step MMKV's rule may take at a different moment.
        #expect(try batched.totalSize <= 2 * expected)
        #expect(try imported.totalSize <= 2 * expected)
        #expect(try imported.count == keys.count && batched.count == keys.count)
    }

    @Test(
        "random batches of sets and removes over few keys agree with a dictionary, through index growth and a reopen",
        arguments: [1, 2, 3] as [UInt64])
    func randomBatchesAgreeWithAModel(seed: UInt64) throws {
        let dir = TemporaryDirectory("batch-model")
        let store = try MappedKV(id: "s", directory: dir.path)
        var model: [String: Int32] = [:]
        var rng = SplitMix64(seed: seed)
        // 600 keys: early batches grow the index while they are applied; later ones repeat keys,
        // set and remove the same key in one batch, and remove keys that are absent.
        for round in 0..<120 {
            let size = Int.random(in: 1...(round < 10 ? 200 : 40), using: &rng)
            try store.batch { batch in
                for _ in 0..<size {
                    let key = "k\(Int.random(in: 0..<600, using: &rng))"
                    if Int.random(in: 0..<4, using: &rng) == 0 {
                        try batch.removeValue(forKey: key)
                        model[key] = nil
                    } else {
                        let value = Int32.random(in: .min ... .max, using: &rng)
                        try batch.set(value, forKey: key)
                        model[key] = value
                    }
                }
            }
        }
        func check(_ store: MappedKV, _ when: String) throws {
            #expect(try store.count == model.count, "seed \(seed) \(when)")
            for index in 0..<600 {
                let key = "k\(index)"
                #expect(try store.int32(forKey: key) == model[key], "seed \(seed) \(when): \(key)")
            }
        }
        try check(store, "after the batches")
        store.close()
        try check(try MappedKV(id: "s", directory: dir.path), "after a reopen")
    }
}
