import Foundation
import MappedKVCollections
import Testing

/// The plain model of one bucket that the process tests check a collection store against: entries
/// of `{"n":N,"u":U}` by key, and which of the two indexes exist ("n", int over value.n; "u",
/// unique int over value.u). Each operation gives the answer `mappedkv collections-child` prints.
struct BucketProcessModel {
    enum Operation {
        case put(String, n: Int, u: Int)
        case remove(String)
        case clear
        case addIndex(String)
        case removeIndex(String)

        /// The line `mappedkv collections-child` takes for the operation on bucket `bucket`.
        func fields(bucket: String) -> [String] {
            switch self {
            case .put(let key, let n, let u): ["put", bucket, key, #"{"n":\#(n),"u":\#(u)}"#]
            case .remove(let key): ["rm", bucket, key]
            case .clear: ["clear", bucket]
            case .addIndex("u"): ["index-add", bucket, "u", "int", "value.u", "unique"]
            case .addIndex(let name): ["index-add", bucket, name, "int", "value.\(name)"]
            case .removeIndex(let name): ["index-rm", bucket, name]
            }
        }
    }

    var entries: [String: (n: Int, u: Int)] = [:]
    var indexes: Set<String> = []

    /// Applies `operation`; returns the child's answer for it.
    mutating func apply(_ operation: Operation) -> String {
        switch operation {
        case .put(let key, let n, let u):
            if indexes.contains("u"), entries.contains(where: { $0.key != key && $0.value.u == u }) {
                return "conflict"
            }
            entries[key] = (n, u)
            return "ok"
        case .remove(let key): return entries.removeValue(forKey: key) == nil ? "absent" : "removed"
        case .clear:
            defer { entries = [:] }
            return "removed \(entries.count)"
        case .addIndex(let name):
            if indexes.contains(name) { return "ok" }
            if name == "u", Set(entries.values.map(\.u)).count < entries.count { return "conflict" }
            indexes.insert(name)
            return "ok"
        case .removeIndex(let name): return indexes.remove(name) == nil ? "unknown" : "ok"
        }
    }

    /// A random operation over `keys`.
    static func random(_ pick: (Int) -> Int, keys: [String]) -> Operation {
        switch pick(20) {
        case 0..<10: .put(keys[pick(keys.count)], n: pick(6), u: pick(24))
        case 10..<14: .remove(keys[pick(keys.count)])
        case 14: .clear
        case 15..<18: .addIndex(pick(2) == 0 ? "n" : "u")
        default: .removeIndex(pick(2) == 0 ? "n" : "u")
        }
    }

    /// Applies `operation` to `bucket` in this process; returns what the child would answer.
    static func perform(_ operation: Operation, on bucket: Bucket<[UInt8]>) throws -> String {
        do {
            switch operation {
            case .put(let key, let n, let u):
                try bucket.put(Array(#"{"n":\#(n),"u":\#(u)}"#.utf8), forKey: key)
                return "ok"
            case .remove(let key): return try bucket.remove(key) ? "removed" : "absent"
            case .clear: return "removed \(try bucket.removeAll())"
            case .addIndex(let name):
                try bucket.addIndex(name, type: .int, source: .valuePath([name]), unique: name == "u")
                return "ok"
            case .removeIndex(let name):
                try bucket.removeIndex(name)
                return "ok"
            }
        } catch CollectionError.uniqueConflict {
            return "conflict"
        } catch CollectionError.unknownIndex {
            return "unknown"
        }
    }

    /// The (n, u) of a stored value, or nil if it is not such an object.
    static func decode(_ bytes: [UInt8]) -> (n: Int, u: Int)? {
        guard let object = try? JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any],
            let n = object["n"] as? Int, let u = object["u"] as? Int
        else { return nil }
        return (n, u)
    }

    /// Keys by their UTF-8 bytes.
    static func sorted(_ keys: some Sequence<String>) -> [String] {
        keys.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
    }

    /// What `bucket` holds, read page by page, as a model (indexes from its definitions).
    static func read(_ bucket: Bucket<[UInt8]>) throws -> BucketProcessModel {
        var model = BucketProcessModel()
        var entries = bucket.makeEntryIterator(pageSize: 5)
        while let entry = try entries.next() {
            model.entries[entry.key] = decode(entry.value) ?? (-1, -1)
        }
        model.indexes = Set(try bucket.indexDefinitions().map(\.name))
        return model
    }

    /// Whether `other` holds the same entries and indexes.
    func matches(_ other: BucketProcessModel) -> Bool {
        indexes == other.indexes && entries.count == other.entries.count
            && entries.allSatisfy { key, value in other.entries[key].map { $0 == value } ?? false }
    }

    /// Checks that `bucket`'s count, keys, pages and index queries agree with the model (which the
    /// entries were checked against already).
    func expectConsistent(_ bucket: Bucket<[UInt8]>, _ context: Comment) throws {
        let keys = Self.sorted(entries.keys)
        #expect(try bucket.count == entries.count, "\(context): count")
        #expect(try bucket.keys() == keys, "\(context): keys")
        #expect(try bucket.keys(after: keys.first, limit: 3) == Array(keys.dropFirst().prefix(3)), "\(context): page")
        if indexes.contains("n") {
            for bound in 0..<6 {
                let expected = entries.values.filter { $0.n >= bound }.count
                #expect(try bucket.count(where: [.greaterOrEqual("n", .int(Int64(bound)))]) == expected, "\(context)")
            }
            let ordered = keys.sorted { a, b in
                let (x, y) = (entries[a]?.n ?? 0, entries[b]?.n ?? 0)
                return x != y ? x < y : a.utf8.lexicographicallyPrecedes(b.utf8)
            }
            #expect(try bucket.query(Query(orderBy: "n")).entries.map(\.key) == ordered, "\(context): order by n")
        }
        if indexes.contains("u") {
            #expect(Set(entries.values.map(\.u)).count == entries.count, "\(context): u is unique")
            for (key, value) in entries {
                let found = try bucket.query(Query(where: [.equal("u", .int(Int64(value.u)))])).entries.map(\.key)
                #expect(found == [key], "\(context): u = \(value.u)")
            }
        }
    }
}
