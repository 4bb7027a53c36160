import Foundation
import MappedKV
import Testing

@testable import MappedKVCollections

/// Random sequences of put, remove, index add and query against a reference that sorts and filters
/// in plain Swift.
@Suite("Query model")
struct QueryModelTests {
    struct Item: Codable, Sendable, Equatable {
        var a: Int?
        var s: String?
    }

    /// The reference: what every entry holds.
    struct Model {
        var entries: [String: (item: Item, m: Int64?)] = [:]
        var indexes: Set<String> = []

        /// The value of index `name` for an entry, as the store's index would have it.
        static func value(_ name: String, _ entry: (item: Item, m: Int64?)) -> IndexValue? {
            switch name {
            case "a": entry.item.a.map { .int(Int64($0)) }
            case "s": entry.item.s.map(IndexValue.string)
            case "m": entry.m.map(IndexValue.int)
            default: nil
            }
        }

        static func less(_ lhs: IndexValue, _ rhs: IndexValue) -> Bool {
            switch (lhs, rhs) {
            case (.int(let a), .int(let b)): a < b
            case (.string(let a), .string(let b)): a.utf8.lexicographicallyPrecedes(b.utf8)
            default: false
            }
        }

        static func meets(_ value: IndexValue?, _ condition: QueryCondition) -> Bool {
            guard let value else { return false }
            switch condition {
            case .equal(_, let bound): return value == bound
            case .notEqual(_, let bound): return value != bound
            case .less(_, let bound): return less(value, bound)
            case .lessOrEqual(_, let bound): return !less(bound, value)
            case .greater(_, let bound): return less(bound, value)
            case .greaterOrEqual(_, let bound): return !less(value, bound)
            case .prefix(_, let text):
                guard case .string(let string) = value else { return false }
                return string.utf8.starts(with: text.utf8)
            case .oneOf(_, let values): return values.contains(value)
            }
        }

        /// The keys a query selects, in order, all pages together.
        func select(_ conditions: [QueryCondition], order: String?, descending: Bool) -> [String] {
            let matching = entries.filter { _, entry in
                conditions.allSatisfy { Self.meets(Self.value($0.indexName, entry), $0) }
            }
            guard let order else {
                let keys = matching.keys.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
                return descending ? keys.reversed() : keys
            }
            let ordered = matching.compactMap { key, entry in Self.value(order, entry).map { (key, $0) } }
                .sorted { lhs, rhs in
                    lhs.1 != rhs.1 ? Self.less(lhs.1, rhs.1) : lhs.0.utf8.lexicographicallyPrecedes(rhs.0.utf8)
                }
                .map(\.0)
            return descending ? ordered.reversed() : ordered
        }
    }

    @Test("1,000 random sequences agree with the model, page by page")
    func randomSequences() throws {
        let dir = try ScratchDirectory()
        var generator = SplitMix(seed: 0x5EED)
        let keys = (0..<12).map { "k\($0)" } + ["", "k1:x", "é"]
        let strings = ["", "a", "ab", "abc", "b", "ba", "z"]
        for sequence in 0..<1_000 {
            var collections = try CollectionStore(id: "s\(sequence)", directory: dir.path)
            var bucket = collections.bucket("items", of: Item.self, cacheLimit: 4)
            var model = Model()
            for _ in 0..<24 {
                switch generator.next() % 10 {
                case 0...4:
                    let key = keys[Int(generator.next() % UInt64(keys.count))]
                    let item = Item(
                        a: generator.next() % 4 == 0 ? nil : Int(generator.next() % 7) - 3,
                        s: generator.next() % 4 == 0 ? nil : strings[Int(generator.next() % UInt64(strings.count))])
                    let m: Int64? = generator.next() % 3 == 0 ? nil : Int64(generator.next() % 5)
                    try bucket.put(item, forKey: key, metadata: m.map { ["m": .int($0)] } ?? [:])
                    model.entries[key] = (item, m)
                case 5:
                    let key = keys[Int(generator.next() % UInt64(keys.count))]
                    #expect(try bucket.remove(key) == (model.entries.removeValue(forKey: key) != nil))
                case 6 where generator.next() % 4 == 0:
                    // Reopen: the indexes are built again from the stored definitions and entries.
                    collections.close()
                    collections = try CollectionStore(id: "s\(sequence)", directory: dir.path)
                    bucket = collections.bucket("items", of: Item.self, cacheLimit: 4)
                    #expect(Set(try bucket.indexDefinitions().map(\.name)) == model.indexes)
                case 6:
                    let name = ["a", "s", "m"][Int(generator.next() % 3)]
                    guard !model.indexes.contains(name) else { continue }
                    switch name {
                    case "a": try bucket.addIndex("a", type: .int, source: .valuePath(["a"]))
                    case "s": try bucket.addIndex("s", type: .string, source: .valuePath(["s"]))
                    default: try bucket.addIndex("m", type: .int, source: .metadata("m"))
                    }
                    model.indexes.insert(name)
                default:
                    guard !model.indexes.isEmpty else { continue }
                    let names = model.indexes.sorted()
                    var conditions: [QueryCondition] = []
                    for _ in 0..<Int(generator.next() % 3) {
                        let name = names[Int(generator.next() % UInt64(names.count))]
                        let value: IndexValue =
                            name == "s"
                            ? .string(strings[Int(generator.next() % UInt64(strings.count))])
                            : .int(Int64(generator.next() % 7) - 3)
                        switch generator.next() % 7 {
                        case 0: conditions.append(.equal(name, value))
                        case 1: conditions.append(.less(name, value))
                        case 2: conditions.append(.lessOrEqual(name, value))
                        case 3: conditions.append(.greater(name, value))
                        case 4: conditions.append(.greaterOrEqual(name, value))
                        case 5:
                            if case .string(let text) = value { conditions.append(.prefix(name, text)) }
                        default: conditions.append(.oneOf(name, [value, name == "s" ? .string("z") : .int(0)]))
                        }
                    }
                    let order = generator.next() % 3 == 0 ? nil : names[Int(generator.next() % UInt64(names.count))]
                    let descending = generator.next() % 2 == 0
                    let limit = Int(generator.next() % 4) + 1
                    let expected = model.select(conditions, order: order, descending: descending)
                    var got: [String] = []
                    var cursor: QueryCursor?
                    repeat {
                        let page = try bucket.query(
                            Query(
                                where: conditions, orderBy: order, descending: descending, limit: limit, after: cursor))
                        #expect(page.entries.count <= limit)
                        for entry in page.entries {
                            #expect(entry.value == model.entries[entry.key]?.item)
                        }
                        got += page.entries.map(\.key)
                        cursor = page.cursor
                    } while cursor != nil && got.count <= expected.count
                    #expect(
                        got == expected,
                        "sequence \(sequence): \(conditions) order \(order ?? "key") desc \(descending)")
                    let counted = try bucket.count(where: conditions)
                    let matching = model.select(conditions, order: nil, descending: false).count
                    #expect(counted == matching, "sequence \(sequence): count \(conditions)")
                }
            }
            collections.close()
        }
    }
}

/// A small seeded generator.
struct SplitMix: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
