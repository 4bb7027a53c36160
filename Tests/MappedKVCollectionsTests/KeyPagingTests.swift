import Foundation
import MappedKV
import Testing

@testable import MappedKVCollections

/// Pages of keys and entries by key: the order (UTF-8 bytes), the keyset cursor, the iterators,
/// bad limits, and a walk that goes on while random writes change the bucket, checked against a
/// dictionary model over many seeds.
@Suite("Key paging")
struct KeyPagingTests {
    /// Keys by their UTF-8 bytes, as pages order them.
    static func sorted(_ keys: some Sequence<String>) -> [String] {
        keys.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
    }

    @Test("pages of keys and entries follow the UTF-8 byte order, with or without indexes")
    func pagesInOrder() throws {
        let dir = try ScratchDirectory()
        let collections = try CollectionStore(id: "paging", directory: dir.path)
        defer { collections.close() }
        // Keys whose bytes order differs from their canonical order, an empty key, keys sharing
        // their first 8 bytes (the order's prefix) and keys that are prefixes of others.
        let keys =
            [
                "", "a", "ab", "abcdefgh", "abcdefgh1", "abcdefgh0", "abcdefgh", "é", "e\u{301}", "z", "Z", "k:1", "日本",
            ] + (0..<40).map { "n\($0)" }
        for name in ["plain", "indexed"] {
            let bucket = collections.bucket(name, of: Int.self)
            if name == "indexed" { try bucket.addIndex("v", type: .int, source: .valuePath([])) }
            for (position, key) in keys.enumerated() { try bucket.put(position, forKey: key) }
            let expected = Self.sorted(Set(keys.map { ExactString($0) }).map(\.string))
            #expect(try bucket.keys() == expected, "bucket \(name)")
            for limit in [1, 3, 7, 100] {
                var walked: [String] = []
                var page = try bucket.keys(limit: limit)
                while !page.isEmpty {
                    #expect(page.count <= limit)
                    walked += page
                    guard page.count == limit, let last = page.last else { break }
                    page = try bucket.keys(after: last, limit: limit)
                }
                #expect(walked == expected, "bucket \(name), pages of \(limit)")
            }
            // A cursor that is not a key starts at the first key above it.
            #expect(try bucket.keys(after: "abcdefgh00", limit: 2) == ["abcdefgh1", "e\u{301}"])
            #expect(try bucket.keys(after: "\u{10FFFF}", limit: 5) == [])
            #expect(try bucket.keys(limit: 0) == [])
            let entries = try bucket.entries(after: "n1", limit: 3)
            #expect(entries.map(\.key) == ["n10", "n11", "n12"])
            #expect(
                entries.map(\.value)
                    == entries.map { entry in keys.lastIndex { $0.utf8.elementsEqual(entry.key.utf8) } ?? -1 })
            var iterator = bucket.makeEntryIterator(pageSize: 4)
            var iterated: [String] = []
            while let entry = try iterator.next() { iterated.append(entry.key) }
            #expect(iterated == expected, "bucket \(name), entry iterator")
            var keyIterator = bucket.makeKeyIterator(pageSize: 5)
            var keyed: [String] = []
            while let key = try keyIterator.next() { keyed.append(key) }
            #expect(keyed == expected, "bucket \(name), key iterator")
        }
    }

    @Test("a negative limit or a page size of 0 is a clear error, and changes nothing")
    func badLimits() throws {
        let dir = try ScratchDirectory()
        let collections = try CollectionStore(id: "paging", directory: dir.path)
        defer { collections.close() }
        let bucket = collections.bucket("b", of: String.self)
        try bucket.put("x", forKey: "k")
        #expect(throws: CollectionError.self) { try bucket.keys(limit: -1) }
        #expect(throws: CollectionError.self) { try bucket.entries(after: "a", limit: -5) }
        var keys = bucket.makeKeyIterator(pageSize: 0)
        #expect(throws: CollectionError.self) { try keys.next() }
        var entries = bucket.makeEntryIterator(pageSize: -3)
        #expect(throws: CollectionError.self) { try entries.next() }
        do {
            _ = try bucket.keys(limit: -1)
        } catch {
            #expect("\(error)".contains("limit"))
        }
        #expect(try bucket.keys(limit: 10) == ["k"])
        #expect(try bucket.count == 1)
    }

    /// The seeds of the walk model; a failure names its seed.
    static let seeds: [UInt64] = (0..<30).map { 0x9A6E_0000 + $0 }

    @Test(
        "a walk of pages while random writes change the bucket skips no key that stayed, repeats none", arguments: seeds
    )
    func walkWhileWriting(seed: UInt64) throws {
        let dir = try ScratchDirectory()
        var generator = SplitMix(seed: seed)
        func pick(_ count: Int) -> Int { Int(generator.next() % UInt64(count)) }
        let universe = (0..<60).map { "k\($0)" } + ["", "é", "e\u{301}", "k1:", "kkkkkkkk1", "kkkkkkkk2"]
        var collections = try CollectionStore(id: "walk", directory: dir.path)
        var bucket = collections.bucket("b", of: Int.self, cacheLimit: 4)
        // By bytes: "é" and "e\u{301}" are two keys to the store, one to a `[String: Int]`.
        var model: [ExactString: Int] = [:]
        var indexed = false
        for key in universe where pick(2) == 0 {
            let value = pick(9)
            try bucket.put(value, forKey: key)
            model[ExactString(key)] = value
        }
        // One walk in progress at a time: its cursor, the keys it returned, and the keys present
        // at every step since it began (those it must return).
        var cursor: String?
        var walked: [String] = []
        var stayed = Set(model.keys)
        for step in 0..<200 {
            let context: Comment = "seed \(seed) step \(step)"
            switch pick(16) {
            case 0..<6:
                let key = universe[pick(universe.count)]
                let value = pick(9)
                try bucket.put(value, forKey: key)
                model[ExactString(key)] = value
            case 6..<9:
                let key = universe[pick(universe.count)]
                #expect(try bucket.remove(key) == (model.removeValue(forKey: ExactString(key)) != nil), context)
            case 9:
                if pick(4) == 0 {
                    try bucket.removeAll()
                    model = [:]
                }
            case 10:
                if indexed {
                    try bucket.removeIndex("v")
                } else {
                    try bucket.addIndex("v", type: .int, source: .valuePath([]))
                }
                indexed.toggle()
            case 11:
                if pick(3) == 0 {
                    collections.close()
                    collections = try CollectionStore(id: "walk", directory: dir.path)
                    bucket = collections.bucket("b", of: Int.self, cacheLimit: 4)
                }
            default:
                // The next page of the walk: the model's first keys above the cursor.
                let limit = 1 + pick(6)
                let useEntries = pick(2) == 0
                let page =
                    useEntries
                    ? try bucket.entries(after: cursor, limit: limit).map(\.key)
                    : try bucket.keys(after: cursor, limit: limit)
                let above = Self.sorted(model.keys.map(\.string)).filter { key in
                    cursor.map { $0.utf8.lexicographicallyPrecedes(key.utf8) } ?? true
                }
                #expect(page == Array(above.prefix(limit)), context)
                if useEntries {
                    let values = try bucket.entries(after: cursor, limit: limit).map(\.value)
                    #expect(values == page.compactMap { model[ExactString($0)] }, context)
                }
                walked += page
                cursor = page.last ?? cursor
                if page.count < limit {
                    // The walk is over: each key once, in order, every key that stayed included.
                    #expect(walked == Self.sorted(Set(walked.map(ExactString.init)).map(\.string)), context)
                    let returned = Set(walked.map(ExactString.init))
                    #expect(stayed.isSubset(of: returned), context)
                    cursor = nil
                    walked = []
                    stayed = Set(model.keys)
                }
            }
            stayed.formIntersection(model.keys)
            #expect(try bucket.count == model.count, context)
            let keyOrder = collections.indexes.state.withLock { $0.buckets[ExactString("b")]?.keyOrder }
            if let keyOrder {
                #expect(keyOrder.structureProblem() == nil, context)
                #expect(keyOrder.count == model.count, context)
            }
        }
        collections.close()
    }
}
