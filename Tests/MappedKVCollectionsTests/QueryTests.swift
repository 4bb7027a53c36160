import Foundation
import MappedKV
import Testing

@testable import MappedKVCollections

struct User: Codable, Sendable, Equatable {
    struct Profile: Codable, Sendable, Equatable { var age: Int }
    var name: String
    var profile: Profile
    var score: Double
}

@Suite("Indexes and queries")
struct QueryTests {
    static func users(_ dir: ScratchDirectory, id: String = "users") throws -> (CollectionStore, Bucket<User>) {
        let collections = try CollectionStore(id: id, directory: dir.path)
        let users = collections.bucket("users", of: User.self)
        return (collections, users)
    }

    @Test("indexes over a JSON path, metadata and created: ranges, prefix, in, order, limit and cursor")
    func queries() throws {
        let dir = try ScratchDirectory()
        let (_, users) = try Self.users(dir)
        try users.addIndex("age", type: .int, source: IndexSource("value.profile.age")!)
        try users.addIndex("name", type: .string, source: .valuePath(["name"]), unique: true)
        try users.addIndex("tier", type: .string, source: .metadata("tier"))
        for (index, name) in ["ada", "alan", "grace", "barbara", "edsger", "donald", "ken"].enumerated() {
            try users.put(
                User(name: name, profile: .init(age: 20 + index * 5), score: Double(index)), forKey: "u\(index)",
                metadata: ["tier": .string(index % 2 == 0 ? "gold" : "silver")])
        }
        let page = try users.query(Query(where: [.greaterOrEqual("age", .int(30))], orderBy: "age", limit: 2))
        #expect(page.entries.map(\.value.name) == ["grace", "barbara"])
        let next = try users.query(
            Query(where: [.greaterOrEqual("age", .int(30))], orderBy: "age", limit: 2, after: page.cursor))
        #expect(next.entries.map(\.value.name) == ["edsger", "donald"])
        let last = try users.query(
            Query(where: [.greaterOrEqual("age", .int(30))], orderBy: "age", limit: 2, after: next.cursor))
        #expect(last.entries.map(\.value.name) == ["ken"] && last.cursor == nil)

        let descending = try users.query(Query(where: [.less("age", .int(35))], orderBy: "age", descending: true))
        #expect(descending.entries.map(\.value.name) == ["grace", "alan", "ada"])
        #expect(
            try users.query(Query(where: [.prefix("name", "a")], orderBy: "name")).entries.map(\.key) == ["u0", "u1"])
        let gold = try users.query(Query(where: [.equal("tier", .string("gold")), .greater("age", .int(25))]))
        #expect(gold.entries.map(\.key) == ["u2", "u4", "u6"], "ordered by key without an order")
        let some = try users.query(Query(where: [.oneOf("name", [.string("ken"), .string("ada"), .string("zed")])]))
        #expect(some.entries.map(\.value.name) == ["ada", "ken"])
        #expect(try users.count(where: [.greater("age", .int(25)), .less("age", .int(45))]) == 3)
        #expect(try users.count(where: [.equal("tier", .string("silver"))]) == 3)
        #expect(try users.count(where: []) == 7)

        #expect(throws: CollectionError.unknownIndex(bucket: "users", name: "height")) {
            _ = try users.query(Query(orderBy: "height"))
        }
    }

    @Test("a handle's puts reach indexes added after its first put, by itself or by another handle")
    func putsReachIndexesAddedLater() throws {
        let dir = try ScratchDirectory()
        let (collections, users) = try Self.users(dir)
        // The first put finds no index set; the handle must not keep using that answer.
        try users.put(User(name: "ada", profile: .init(age: 36), score: 1), forKey: "u0")
        try users.addIndex("age", type: .int, source: IndexSource("value.profile.age")!)
        try users.put(User(name: "alan", profile: .init(age: 41), score: 2), forKey: "u1")
        #expect(try users.query(Query(orderBy: "age")).entries.map(\.key) == ["u0", "u1"])
        // Another handle on the same bucket adds a second index; the first handle's next puts feed it.
        let other = collections.bucket("users", of: User.self)
        try other.addIndex("name", type: .string, source: .valuePath(["name"]))
        try users.put(User(name: "grace", profile: .init(age: 30), score: 3), forKey: "u2")
        try users.put(User(name: "aaron", profile: .init(age: 50), score: 4), forKey: "u0")
        #expect(try users.query(Query(orderBy: "name")).entries.map(\.value.name) == ["aaron", "alan", "grace"])
        #expect(try users.query(Query(orderBy: "age")).entries.map(\.key) == ["u2", "u1", "u0"])
        #expect(try other.count(where: [.greater("age", .int(35))]) == 2)
    }

    @Test("a page of a raw-bytes bucket gives each entry as a single read does: value, metadata, times")
    func rawBytesPagesMatchSingleReads() throws {
        let dir = try ScratchDirectory()
        let collections = try CollectionStore(id: "raw", directory: dir.path)
        let blobs = collections.bucket("blobs", serializer: RawEntrySerializer())
        try blobs.addIndex("rank", type: .int, source: .metadata("rank"))
        for number in 0..<30 {
            let metadata: [String: MetadataValue] =
                number % 3 == 0 ? [:] : ["rank": .int(Int64(number)), "tag": .string("t\(number)")]
            try blobs.put((0..<number).map { UInt8($0) }, forKey: "b\(number)", metadata: metadata)
        }
        let page = try blobs.query(Query(where: [.greater("rank", .int(4))], orderBy: "rank", limit: 7))
        #expect(page.entries.map(\.key) == ["b5", "b7", "b8", "b10", "b11", "b13", "b14"])
        for entry in page.entries {
            #expect(try blobs.entry(forKey: entry.key) == entry)
            #expect(entry.bucket == "blobs" && entry.metadata["tag"] == .string("t\(entry.value.count)"))
        }
        let rest = try blobs.query(
            Query(where: [.greater("rank", .int(4))], orderBy: "rank", limit: 100, after: page.cursor))
        #expect(rest.entries.count == 10 && rest.cursor == nil)
    }

    @Test("a cursor continues correctly after entries are added before it")
    func keysetPaging() throws {
        let dir = try ScratchDirectory()
        let (_, users) = try Self.users(dir)
        try users.addIndex("age", type: .int, source: .valuePath(["profile", "age"]))
        for age in stride(from: 10, through: 100, by: 10) {
            try users.put(User(name: "n\(age)", profile: .init(age: age), score: 0), forKey: "k\(age)")
        }
        let first = try users.query(Query(orderBy: "age", limit: 3))
        #expect(first.entries.map(\.value.profile.age) == [10, 20, 30])
        try users.put(User(name: "early", profile: .init(age: 5), score: 0), forKey: "early")
        try users.put(User(name: "tie", profile: .init(age: 30), score: 0), forKey: "k30b")
        let second = try users.query(Query(orderBy: "age", limit: 3, after: first.cursor))
        #expect(second.entries.map(\.key) == ["k30b", "k40", "k50"], "ties after the cursor are ordered by key")
    }

    @Test("a unique conflict refuses the put and changes nothing; a unique index over duplicates is refused")
    func uniqueness() throws {
        let dir = try ScratchDirectory()
        let (_, users) = try Self.users(dir)
        try users.addIndex("name", type: .string, source: .valuePath(["name"]), unique: true)
        try users.put(User(name: "ada", profile: .init(age: 36), score: 1), forKey: "a")
        try users.put(User(name: "bob", profile: .init(age: 40), score: 1), forKey: "b")
        #expect(throws: CollectionError.uniqueConflict(bucket: "users", index: "name", key: "b", existingKey: "a")) {
            try users.put(User(name: "ada", profile: .init(age: 1), score: 0), forKey: "b")
        }
        #expect(try users.value(forKey: "b")?.name == "bob")
        #expect(try users.query(Query(where: [.equal("name", .string("bob"))])).entries.map(\.key) == ["b"])
        // The same key may keep its value.
        try users.put(User(name: "ada", profile: .init(age: 37), score: 1), forKey: "a")
        try users.put(User(name: "carol", profile: .init(age: 40), score: 1), forKey: "c")
        #expect(throws: CollectionError.self) {
            try users.addIndex("age", type: .int, source: .valuePath(["profile", "age"]), unique: true)
        }
        #expect(try users.indexDefinitions().map(\.name) == ["name"])
    }

    @Test("keys equal as Swift strings but different in bytes are different entries, each indexed")
    func canonicallyEquivalentKeysStayApart() throws {
        let dir = try ScratchDirectory()
        let (collections, users) = try Self.users(dir)
        try users.addIndex("age", type: .int, source: .valuePath(["profile", "age"]))
        // "é" as one scalar and as "e" plus a combining accent: `==` in Swift, two keys in the store.
        let composed = "caf\u{E9}"
        let decomposed = "cafe\u{301}"
        #expect(composed == decomposed && Array(composed.utf8) != Array(decomposed.utf8))
        try users.put(User(name: "composed", profile: .init(age: 1), score: 0), forKey: composed)
        try users.put(User(name: "decomposed", profile: .init(age: 2), score: 0), forKey: decomposed)
        #expect(try users.count == 2)
        #expect(try users.count(where: [.equal("age", .int(1))]) == 1)
        #expect(try users.count(where: [.equal("age", .int(2))]) == 1)
        let ordered = try users.query(Query(orderBy: "age")).entries
        #expect(ordered.map(\.value.name) == ["composed", "decomposed"])
        #expect(ordered.map { Array($0.key.utf8) } == [Array(composed.utf8), Array(decomposed.utf8)])
        #expect(try users.remove(decomposed))
        #expect(try users.query(Query(orderBy: "age")).entries.map(\.value.name) == ["composed"])
        collections.close()
        // The indexes built at open keep them apart too.
        let (_, reopened) = try Self.users(dir)
        try reopened.put(User(name: "decomposed again", profile: .init(age: 3), score: 0), forKey: decomposed)
        #expect(
            try reopened.query(Query(orderBy: "age")).entries.map(\.value.name) == ["composed", "decomposed again"])
    }

    @Test("buckets whose names are equal as Swift strings but different in bytes keep their own indexes")
    func canonicallyEquivalentBucketNamesStayApart() throws {
        let dir = try ScratchDirectory()
        let composed = "caf\u{E9}"
        let decomposed = "cafe\u{301}"
        do {
            let collections = try CollectionStore(id: "users", directory: dir.path)
            for (number, name) in [composed, decomposed].enumerated() {
                let bucket = collections.bucket(name, of: User.self)
                try bucket.addIndex("age", type: .int, source: .valuePath(["profile", "age"]))
                try bucket.put(User(name: name, profile: .init(age: number), score: 0), forKey: "k")
            }
            for (number, name) in [composed, decomposed].enumerated() {
                let entries = try collections.bucket(name, of: User.self).query(Query(orderBy: "age")).entries
                #expect(entries.map { Array($0.value.name.utf8) } == [Array(name.utf8)])
                #expect(entries.map(\.value.profile.age) == [number])
            }
            collections.close()
        }
        // The indexes built at open keep them apart too.
        let collections = try CollectionStore(id: "users", directory: dir.path)
        #expect(try collections.indexedBucketNames().count == 2)
        for (number, name) in [composed, decomposed].enumerated() {
            let bucket = collections.bucket(name, of: User.self)
            #expect(try bucket.count(where: [.equal("age", .int(Int64(number)))]) == 1)
            #expect(try bucket.query(Query(orderBy: "age")).entries.map(\.value.profile.age) == [number])
        }
    }

    @Test("an import checks unique values on each key's last entry, and tells keys apart by their bytes")
    func importChecksUniqueValuesByLastEntryAndBytes() throws {
        let dir = try ScratchDirectory()
        let (_, users) = try Self.users(dir)
        try users.addIndex("name", type: .string, source: .valuePath(["name"]), unique: true)
        let now = Date()
        func entry(_ key: String, _ name: String) -> Entry<User> {
            Entry(
                bucket: "users", key: key, value: User(name: name, profile: .init(age: 1), score: 0), metadata: [:],
                created: now, modified: now)
        }
        // "a" takes "x" and then gives it up for "y" in the same batch: "b" may take "x".
        try users.importEntries([entry("a", "x"), entry("a", "y"), entry("b", "x")])
        #expect(try users.value(forKey: "a")?.name == "y")
        #expect(try users.value(forKey: "b")?.name == "x")
        // Two keys equal as Swift strings but different in bytes are two entries: one value each.
        #expect(throws: CollectionError.self) {
            try users.importEntries([entry("caf\u{E9}", "z"), entry("cafe\u{301}", "z")])
        }
        #expect(try users.count == 2)
    }

    @Test("stored indexes are seen by a new handle; closure indexes are local; dates and doubles order")
    func definitionsPersist() throws {
        let dir = try ScratchDirectory()
        do {
            let (collections, users) = try Self.users(dir)
            try users.addIndex("score", type: .double, source: .valuePath(["score"]))
            try users.addIndex("created", type: .date, source: .created)
            for index in 0..<5 {
                try users.put(
                    User(name: "u\(index)", profile: .init(age: index), score: 1.5 - Double(index)), forKey: "k\(index)"
                )
            }
            try users.addIndex("initial", type: .string) { entry in .string(String(entry.value.name.prefix(1))) }
            #expect(try users.count(where: [.equal("initial", .string("u"))]) == 5)
            collections.close()
        }
        let (_, reopened) = try Self.users(dir)
        #expect(try reopened.indexDefinitions().map(\.name) == ["created", "score"])
        #expect(try reopened.query(Query(orderBy: "score")).entries.map(\.key) == ["k4", "k3", "k2", "k1", "k0"])
        #expect(try reopened.query(Query(where: [.greater("score", .double(0))])).entries.count == 2)
        let byCreated = try reopened.query(Query(orderBy: "created"))
        #expect(byCreated.entries.count == 5)
        #expect(throws: CollectionError.unknownIndex(bucket: "users", name: "initial")) {
            _ = try reopened.count(where: [.equal("initial", .string("u"))])
        }
    }
}
