import Foundation
import MappedKV
import Testing

@testable import MappedKVCollections

/// Removing indexes, a bucket's entries and whole buckets.
@Suite("Bucket removal")
struct RemovalTests {
    struct Item: Codable, Sendable, Equatable {
        var n: Int
        var tag: String
    }

    @Test("removeIndex: the definition goes from the store, queries on it fail, a unique one no longer binds")
    func removeIndex() throws {
        let dir = try ScratchDirectory()
        var collections = try CollectionStore(id: "feed", directory: dir.path)
        var items = collections.bucket("items", of: Item.self)
        for number in 0..<5 { try items.put(Item(n: number, tag: "t\(number % 2)"), forKey: "k\(number)") }
        try items.addIndex("n", type: .int, source: .valuePath(["n"]), unique: true)
        try items.addIndex("tag", type: .string, source: .valuePath(["tag"]))
        #expect(throws: CollectionError.uniqueConflict(bucket: "items", index: "n", key: "k9", existingKey: "k1")) {
            try items.put(Item(n: 1, tag: "x"), forKey: "k9")
        }

        try items.removeIndex("n")
        #expect(try items.indexDefinitions().map(\.name) == ["tag"])
        #expect(throws: CollectionError.unknownIndex(bucket: "items", name: "n")) {
            _ = try items.query(Query(where: [.equal("n", .int(1))]))
        }
        try items.put(Item(n: 1, tag: "x"), forKey: "k9")
        #expect(try items.count(where: [.equal("tag", .string("x"))]) == 1)
        #expect(throws: CollectionError.unknownIndex(bucket: "items", name: "n")) { try items.removeIndex("n") }
        #expect(throws: CollectionError.unknownIndex(bucket: "other", name: "tag")) {
            try collections.bucket("other", of: Item.self).removeIndex("tag")
        }

        // After a reopen the index is not built again: its definition is no longer stored.
        collections.close()
        collections = try CollectionStore(id: "feed", directory: dir.path)
        items = collections.bucket("items", of: Item.self)
        #expect(try items.indexDefinitions().map(\.name) == ["tag"])
        try items.removeIndex("tag")
        #expect(try items.indexDefinitions().isEmpty && collections.indexedBucketNames().isEmpty)
        #expect(try items.count == 6 && items.value(forKey: "k9") == Item(n: 1, tag: "x"))

        // A closure index is removed the same way, and its name is free again.
        try items.addIndex("big", type: .int) { entry in entry.value.n > 2 ? .int(1) : nil }
        #expect(try items.count(where: [.equal("big", .int(1))]) == 2)
        try items.removeIndex("big")
        #expect(throws: CollectionError.unknownIndex(bucket: "items", name: "big")) {
            _ = try items.count(where: [.equal("big", .int(1))])
        }
        try items.addIndex("big", type: .int, source: .valuePath(["n"]))
        #expect(try items.count(where: [.greater("big", .int(2))]) == 2)
        collections.close()
    }

    @Test("removeAll: the entries and their index entries go, the definitions stay and index later puts")
    func removeAll() throws {
        let dir = try ScratchDirectory()
        var collections = try CollectionStore(id: "feed", directory: dir.path)
        var items = collections.bucket("items", of: Item.self)
        let others = collections.bucket("others", of: Item.self)
        try items.addIndex("n", type: .int, source: .valuePath(["n"]), unique: true)
        for number in 0..<50 { try items.put(Item(n: number, tag: "t"), forKey: "k\(number)") }
        try others.put(Item(n: 1, tag: "o"), forKey: "k1")
        #expect(try items.value(forKey: "k1") != nil)  // cached

        #expect(try items.removeAll() == 50)
        #expect(try items.count == 0 && items.keys().isEmpty && items.value(forKey: "k1") == nil)
        #expect(items.cachedEntryCount == 0)
        #expect(try items.query(Query(where: [.greaterOrEqual("n", .int(0))])).entries.isEmpty)
        #expect(try items.count(where: [.greaterOrEqual("n", .int(0))]) == 0)
        #expect(try items.indexDefinitions().map(\.name) == ["n"])
        #expect(try others.count == 1 && others.value(forKey: "k1") == Item(n: 1, tag: "o"))
        #expect(try items.removeAll() == 0)

        // The unique index binds again from empty: the value of a removed entry is free.
        try items.put(Item(n: 1, tag: "new"), forKey: "other")
        #expect(try items.count(where: [.equal("n", .int(1))]) == 1 && items.count == 1)
        collections.close()
        collections = try CollectionStore(id: "feed", directory: dir.path)
        items = collections.bucket("items", of: Item.self)
        #expect(try items.keys() == ["other"] && items.count == 1)
        #expect(try items.count(where: [.equal("n", .int(1))]) == 1)
        collections.close()
    }

    @Test("removeBucket: entries, definitions and count go; other buckets stay")
    func removeBucket() throws {
        let dir = try ScratchDirectory()
        var collections = try CollectionStore(id: "feed", directory: dir.path)
        // "a" and "a:" share no keys with each other: the length prefix keeps them apart.
        let a = collections.bucket("a", of: Item.self)
        let other = collections.bucket("a:", of: Item.self)
        try a.addIndex("n", type: .int, source: .valuePath(["n"]))
        try other.addIndex("n", type: .int, source: .valuePath(["n"]))
        for number in 0..<10 {
            try a.put(Item(n: number, tag: "a"), forKey: "k\(number)")
            try other.put(Item(n: number, tag: "b"), forKey: ":k\(number)")
        }
        #expect(try collections.removeBucket("a") == 10)
        #expect(try collections.bucketNames() == ["a:"] && collections.indexedBucketNames() == ["a:"])
        #expect(try a.count == 0 && a.keys().isEmpty && a.indexDefinitions().isEmpty)
        #expect(throws: CollectionError.unknownIndex(bucket: "a", name: "n")) {
            _ = try a.count(where: [.equal("n", .int(1))])
        }
        #expect(try other.count == 10 && other.count(where: [.less("n", .int(5))]) == 5)
        #expect(try collections.removeBucket("a") == 0)
        #expect(try collections.removeBucket("never") == 0)

        collections.close()
        collections = try CollectionStore(id: "feed", directory: dir.path)
        #expect(try collections.indexedBucketNames() == ["a:"])
        let store = collections.store
        #expect(try store.allKeys.filter { $0.contains("\u{2}1:a") || $0.contains("\u{3}1:a") }.isEmpty)
        #expect(try !store.contains(BucketCount.key(bucket: "a")) && store.contains(BucketCount.key(bucket: "a:")))
        // The bucket can be used again, its indexes declared anew.
        let again = collections.bucket("a", of: Item.self)
        try again.put(Item(n: 3, tag: "again"), forKey: "k3")
        #expect(try again.count == 1 && again.indexDefinitions().isEmpty)
        collections.close()
    }
}
