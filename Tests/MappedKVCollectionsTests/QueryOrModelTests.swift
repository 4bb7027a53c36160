import Foundation
import MappedKV
import Testing

@testable import MappedKVCollections

// Random sequences of put, remove, index add and drop, clear, queries of OR groups with every
// operator (not-equal included), both orders, pages read with a cursor while entries change
// between them, and counts, against a plain in-memory model. A failure names its seed; set
// MAPPEDKV_QUERY_SEED to run that seed alone.

extension QueryModelTests.Model {
    /// The entries meeting at least one group, as (key, ordering value), in the query's order.
    func rows(_ groups: [[QueryCondition]], order: String?, descending: Bool) -> [(key: String, value: IndexValue?)] {
        let matching = entries.filter { _, entry in
            groups.contains { group in group.allSatisfy { Self.meets(Self.value($0.indexName, entry), $0) } }
        }
        var rows: [(key: String, value: IndexValue?)]
        if let order {
            rows = matching.compactMap { key, entry in Self.value(order, entry).map { (key, $0) } }
        } else {
            rows = matching.keys.map { ($0, nil) }
        }
        rows.sort { Self.precedes($0, $1) }
        return descending ? rows.reversed() : rows
    }

    /// Whether row `a` comes before row `b` ascending: by ordering value, then by key.
    static func precedes(_ a: (key: String, value: IndexValue?), _ b: (key: String, value: IndexValue?)) -> Bool {
        if let first = a.value, let second = b.value, first != second { return less(first, second) }
        return a.key.utf8.lexicographicallyPrecedes(b.key.utf8)
    }
}

@Suite("Query model: OR groups, not-equal, paging while entries change")
struct QueryOrModelTests {
    typealias Model = QueryModelTests.Model
    typealias Item = QueryModelTests.Item

    static let keys = (0..<14).map { "k\($0)" } + ["", "k1:x", "é"]
    static let strings = ["", "a", "ab", "abc", "b", "ba", "z"]

    /// A random condition on index `name` (every operator).
    static func condition(_ name: String, _ generator: inout SplitMix) -> QueryCondition {
        let value: IndexValue =
            name == "s"
            ? .string(strings[Int(generator.next() % UInt64(strings.count))]) : .int(Int64(generator.next() % 7) - 3)
        switch generator.next() % 9 {
        case 0: return .equal(name, value)
        case 1, 2: return .notEqual(name, value)
        case 3: return .less(name, value)
        case 4: return .lessOrEqual(name, value)
        case 5: return .greater(name, value)
        case 6: return .greaterOrEqual(name, value)
        case 7:
            if case .string(let text) = value { return .prefix(name, text) }
            return .notEqual(name, value)
        default: return .oneOf(name, [value, name == "s" ? .string("z") : .int(0)])
        }
    }

    /// A random put or remove, applied to the bucket and the model.
    static func change(_ bucket: Bucket<Item>, _ model: inout Model, _ generator: inout SplitMix) throws {
        let key = keys[Int(generator.next() % UInt64(keys.count))]
        if generator.next() % 4 == 0 {
            #expect(try bucket.remove(key) == (model.entries.removeValue(forKey: key) != nil))
            return
        }
        let item = Item(
            a: generator.next() % 4 == 0 ? nil : Int(generator.next() % 7) - 3,
            s: generator.next() % 4 == 0 ? nil : strings[Int(generator.next() % UInt64(strings.count))])
        let m: Int64? = generator.next() % 3 == 0 ? nil : Int64(generator.next() % 5)
        try bucket.put(item, forKey: key, metadata: m.map { ["m": .int($0)] } ?? [:])
        model.entries[key] = (item, m)
    }

    static func addIndex(_ name: String, to bucket: Bucket<Item>) throws {
        switch name {
        case "a": try bucket.addIndex("a", type: .int, source: .valuePath(["a"]))
        case "s": try bucket.addIndex("s", type: .string, source: .valuePath(["s"]))
        default: try bucket.addIndex("m", type: .int, source: .metadata("m"))
        }
    }

    /// Runs one random sequence; returns the number of queries it checked.
    static func run(seed: UInt64, directory: String) throws -> Int {
        var generator = SplitMix(seed: seed)
        let collections = try CollectionStore(id: "s\(seed)", directory: directory)
        defer { collections.close() }
        let bucket = collections.bucket("items", of: Item.self, cacheLimit: 4)
        var model = Model()
        var checked = 0
        for _ in 0..<40 {
            switch generator.next() % 12 {
            case 0...4:
                try change(bucket, &model, &generator)
            case 5:
                let name = ["a", "s", "m"][Int(generator.next() % 3)]
                if model.indexes.contains(name) {
                    try bucket.removeIndex(name)
                    model.indexes.remove(name)
                } else {
                    try addIndex(name, to: bucket)
                    model.indexes.insert(name)
                }
            case 6 where generator.next() % 3 == 0:
                _ = try bucket.removeAll()
                model.entries = [:]
            default:
                try query(bucket, &model, &generator, seed: seed)
                checked += 1
            }
        }
        return checked
    }

    /// A random query of OR groups, read page by page with random changes between pages, each page
    /// checked against the model's rows after the previous page's last row; then its count.
    static func query(_ bucket: Bucket<Item>, _ model: inout Model, _ generator: inout SplitMix, seed: UInt64) throws {
        let all = ["a", "s", "m"]
        // Now and then a condition on an index the bucket does not have: the query is refused.
        let missing = all.filter { !model.indexes.contains($0) }
        let names = model.indexes.sorted()
        var groups: [[QueryCondition]] = []
        for _ in 0..<Int(generator.next() % 4) {
            var group: [QueryCondition] = []
            for _ in 0..<Int(generator.next() % 3) where !names.isEmpty {
                group.append(condition(names[Int(generator.next() % UInt64(names.count))], &generator))
            }
            groups.append(group)
        }
        if let name = missing.first, generator.next() % 10 == 0 {
            groups.append([.equal(name, .int(0))])
            do {
                _ = try bucket.query(Query(anyOf: groups))
                Issue.record("seed \(seed): a query on the missing index \(name) ran")
            } catch {
                #expect(error == .unknownIndex(bucket: "items", name: name), "seed \(seed)")
            }
            #expect(throws: CollectionError.unknownIndex(bucket: "items", name: name)) {
                try bucket.count(anyOf: groups)
            }
            return
        }
        let order =
            names.isEmpty || generator.next() % 3 == 0 ? nil : names[Int(generator.next() % UInt64(names.count))]
        let descending = generator.next() % 2 == 0
        let limit = Int(generator.next() % 4) + 1
        let description = "seed \(seed): \(groups) order \(order ?? "key") desc \(descending) limit \(limit)"
        var cursor: QueryCursor?
        var last: (key: String, value: IndexValue?)?
        for _ in 0..<40 {
            let page = try bucket.query(
                Query(anyOf: groups, orderBy: order, descending: descending, limit: limit, after: cursor))
            var expected = model.rows(groups, order: order, descending: descending)
            if let last {
                expected = expected.filter { descending ? Model.precedes($0, last) : Model.precedes(last, $0) }
            }
            #expect(page.entries.map(\.key) == expected.prefix(limit).map(\.key), "\(description)")
            for entry in page.entries { #expect(entry.value == model.entries[entry.key]?.item, "\(description)") }
            #expect((page.cursor != nil) == (expected.count > limit), "\(description): cursor")
            guard let next = page.cursor, page.entries.count == limit else { break }
            cursor = next
            last = expected[limit - 1]
            // Entries change between pages: the next page continues after this one's last entry.
            for _ in 0..<Int(generator.next() % 3) { try change(bucket, &model, &generator) }
        }
        let counted = try bucket.count(anyOf: groups)
        #expect(counted == model.rows(groups, order: nil, descending: false).count, "\(description): count")
        if groups.count == 1 {
            #expect(try bucket.count(where: groups[0]) == counted, "\(description): count(where:)")
        }
    }

    @Test("400 random sequences of changes, index adds and drops, clears and OR queries agree with the model")
    func randomSequences() throws {
        let dir = try ScratchDirectory()
        let seeds: [UInt64]
        if let text = ProcessInfo.processInfo.environment["MAPPEDKV_QUERY_SEED"], let seed = UInt64(text) {
            seeds = [seed]
        } else {
            seeds = (0..<400).map { 0x0A11_0000 + UInt64($0) }
        }
        var checked = 0
        for seed in seeds {
            do {
                checked += try Self.run(seed: seed, directory: dir.path)
            } catch {
                Issue.record("seed \(seed): \(error)")
                throw error
            }
        }
        #expect(checked > seeds.count)
    }
}
