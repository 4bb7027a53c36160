import Foundation
import MappedKV
import Testing

@testable import MappedKVCollections

/// Buckets' counts, read from their count records (docs/FORMAT.md 11.4).
@Suite("Bucket counts")
struct BucketCountTests {
    struct Item: Codable, Sendable, Equatable {
        var n: Int
        var tag: String
    }

    @Test("counts follow puts, overwrites, removes, imports with repeated and existing keys, and reopen")
    func counts() throws {
        let dir = try ScratchDirectory()
        var collections = try CollectionStore(id: "feed", directory: dir.path)
        var items = collections.bucket("items", of: Item.self)
        #expect(try items.count == 0)
        try items.put(Item(n: 1, tag: ""), forKey: "a")
        try items.put(Item(n: 2, tag: ""), forKey: "a")
        try items.put(Item(n: 3, tag: ""), forKey: "b")
        #expect(try items.count == 2)
        #expect(try items.remove("a") && !items.remove("a"))
        #expect(try items.count == 1)
        let now = Date()
        let batch = ["b", "c", "c", "d"].map {
            Entry(bucket: "items", key: $0, value: Item(n: 0, tag: $0), metadata: [:], created: now, modified: now)
        }
        try items.importEntries(batch)
        #expect(try items.count == 3 && items.keys() == ["b", "c", "d"])
        // An indexed bucket takes the other path of a put (its key table tells a new key).
        try items.addIndex("n", type: .int, source: .valuePath(["n"]))
        try items.put(Item(n: 5, tag: ""), forKey: "e")
        try items.put(Item(n: 6, tag: ""), forKey: "e")
        try items.put(Item(n: 7, tag: ""), forKey: "b")
        #expect(try items.count == 4)
        collections.close()
        collections = try CollectionStore(id: "feed", directory: dir.path)
        items = collections.bucket("items", of: Item.self)
        #expect(try items.count == 4 && items.keys().count == 4)
        for key in try items.keys() { try items.remove(key) }
        #expect(try items.count == 0)
        #expect(try !collections.store.contains(BucketCount.key(bucket: "items")), "an empty bucket keeps no record")
        collections.close()
    }

    @Test("a store of format version 1 is counted read-only, and upgraded with its counts by a read-write open")
    func upgradeFromVersion1() throws {
        let dir = try ScratchDirectory()
        // Each store in its own scope: the process's indexes of a store keep a handle open while
        // a handle of the store lives, and a store cannot be opened read-only and read-write at once.
        do {
            let collections = try CollectionStore(id: "old", directory: dir.path)
            for number in 0..<7 { try collections.bucket("x", of: Int.self).put(number, forKey: "k\(number)") }
            try collections.bucket("y", of: Int.self).put(1, forKey: "k")
            collections.close()
        }
        do {
            // What a release before count records leaves: no count records, marker "1".
            var raw = Configuration()
            raw.storeKind = CollectionStore.kind
            let plain = try MappedKV(id: "old", directory: dir.path, configuration: raw)
            try plain.removeValues(forKeys: [BucketCount.key(bucket: "x"), BucketCount.key(bucket: "y")])
            try plain.set("1", forKey: CollectionStore.kind.markerKey)
            plain.close()
        }
        do {
            let reader = try CollectionStore(
                id: "old", directory: dir.path, configuration: Configuration(isReadOnly: true))
            #expect(try reader.bucket("x", of: Int.self).count == 7 && reader.bucket("y", of: Int.self).count == 1)
            #expect(try reader.bucket("z", of: Int.self).count == 0)
            #expect(try reader.store.string(forKey: CollectionStore.kind.markerKey) == "1")
            reader.close()
        }
        let writer = try CollectionStore(id: "old", directory: dir.path)
        #expect(try writer.store.string(forKey: CollectionStore.kind.markerKey) == "2")
        #expect(try writer.store.payload(forKey: BucketCount.key(bucket: "x")) == BucketCount.payload(7))
        #expect(try writer.bucket("x", of: Int.self).count == 7 && writer.bucket("y", of: Int.self).count == 1)
        writer.close()
    }

    @Test("a count record whose bytes are not a count is recounted, not trusted")
    func damagedCountRecord() throws {
        let dir = try ScratchDirectory()
        let collections = try CollectionStore(id: "feed", directory: dir.path)
        let items = collections.bucket("items", of: Int.self)
        for number in 0..<3 { try items.put(number, forKey: "k\(number)") }
        try collections.store.set([1, 2, 3], forKey: BucketCount.key(bucket: "items"))
        #expect(try items.count == 3)
        try items.put(9, forKey: "k9")
        #expect(try items.count == 4)
        #expect(try collections.store.payload(forKey: BucketCount.key(bucket: "items")) == BucketCount.payload(4))
        collections.close()
    }
}
