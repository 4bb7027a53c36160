import Foundation
import Testing

@testable import MappedKVCollections

/// The in-memory structures under the indexes, against plain Swift models: the key table's hash
/// table of IDs (assign, release, growth, loading), the key prefixes that order elements, and an
/// ordered index's chunks (load, then inserts, moves and removals across chunk splits), with many
/// equal values so keys break ties.
@Suite("Index structures")
struct IndexStructureTests {
    @Test(
        "the key table gives each key one ID until it is released, through growth and removals",
        arguments: [1, 2, 3] as [UInt64])
    func keyTableAgreesWithADictionary(seed: UInt64) {
        var generator = SplitMix(seed: seed)
        let table = KeyTable()
        table.load((0..<300).map { "k\($0)" })
        var model: [String: UInt32] = [:]
        for id in 0..<300 { model["k\(id)"] = UInt32(id) }
        for step in 0..<20_000 {
            let key = "k\(Int.random(in: 0..<3_000, using: &generator))"
            if Bool.random(using: &generator) || step < 2_000 {
                let id = table.assign(key)
                if let known = model[key] { #expect(id == known, "seed \(seed) step \(step): \(key)") }
                model[key] = id
            } else {
                table.release(key)
                model[key] = nil
            }
            if step % 1_000 == 0 {
                #expect(table.count == model.count, "seed \(seed) step \(step)")
                for (key, id) in model {
                    #expect(table.id(of: key) == id, "seed \(seed) step \(step): \(key)")
                    #expect(table.key(of: id) == key, "seed \(seed) step \(step): \(id)")
                }
                #expect(Set(table.assignedKeys) == Set(model.keys), "seed \(seed) step \(step)")
                #expect(Set(model.values).count == model.count, "seed \(seed) step \(step)")
            }
        }
        for key in (0..<3_000).map({ "k\($0)" }) { #expect(table.id(of: key) == model[key], "seed \(seed): \(key)") }
    }

    @Test("a key's 8-byte prefix never orders two keys against their bytes", arguments: [1, 2, 3] as [UInt64])
    func keyPrefixesKeepTheKeysOrder(seed: UInt64) {
        var generator = SplitMix(seed: seed)
        // Short, empty, multi-byte and NUL-bearing keys, many sharing their first bytes.
        let pieces = ["", "a", "ab", "\u{0}", "é", "€", "🙂", "abcdefgh", "abcdefg\u{0}", "zz", "\u{7F}"]
        let keys = (0..<2_000).map { _ in
            (0..<Int.random(in: 0..<4, using: &generator)).map { _ in pieces.randomElement(using: &generator)! }
                .joined()
        }
        for _ in 0..<20_000 {
            let a = keys.randomElement(using: &generator)!
            let b = keys.randomElement(using: &generator)!
            let (prefixA, prefixB) = (KeyPrefix.of(a), KeyPrefix.of(b))
            if prefixA < prefixB { #expect(a.utf8.lexicographicallyPrecedes(b.utf8), "seed \(seed): \(a) \(b)") }
            if a.utf8.lexicographicallyPrecedes(b.utf8) { #expect(prefixA <= prefixB, "seed \(seed): \(a) \(b)") }
        }
    }

    @Test(
        "an ordered index stays sorted by (value, key) through loads, inserts, moves and removals",
        arguments: [1, 2, 3] as [UInt64])
    func orderedIndexAgreesWithASortedArray(seed: UInt64) {
        var generator = SplitMix(seed: seed)
        let table = KeyTable()
        // Keys sharing their first 8 bytes, so that the load's sort must compare whole keys.
        let keys = (0..<2_000).map { "samepref\($0)" } + (0..<2_000).map { "k\($0)" }
        table.load(keys)
        let index = OrderedIndex<Int64>(table: table)
        var model: [UInt32: Int64] = [:]
        var loaded: [(value: Int64, id: UInt32)] = []
        for id in 0..<UInt32(keys.count) where id % 3 != 0 {
            let value = Int64.random(in: 0..<50, using: &generator)
            loaded.append((value, id))
            model[id] = value
        }
        index.load(loaded)
        for step in 0..<6_000 {
            let id = UInt32.random(in: 0..<UInt32(keys.count), using: &generator)
            let value: Int64? = step % 5 == 0 ? nil : Int64.random(in: 0..<50, using: &generator)
            index.set(value, for: id)
            model[id] = value
            if step % 500 == 0 { check(index, model, table, "seed \(seed) step \(step)") }
        }
        check(index, model, table, "seed \(seed) at the end")
    }

    @Test(
        "an ordered index stays sorted as leaves and groups split, empty and are reused",
        arguments: [1, 2, 3] as [UInt64])
    func orderedIndexThroughSplitsAndEmptiedNodes(seed: UInt64) {
        var generator = SplitMix(seed: seed)
        let table = KeyTable()
        // Enough elements, inserted one by one, to split leaves and groups many times over; then
        // most are removed, emptying whole leaves and groups, and the freed nodes are filled again.
        let keys = (0..<30_000).map { "key\($0)" }
        table.load(keys)
        let index = OrderedIndex<Int64>(table: table)
        var model: [UInt32: Int64] = [:]
        let order = (0..<UInt32(keys.count)).shuffled(using: &generator)
        for (step, id) in order.enumerated() {
            let value = Int64.random(in: 0..<40, using: &generator)
            index.set(value, for: id)
            model[id] = value
            if step % 7_500 == 0 { check(index, model, table, "seed \(seed) insert \(step)") }
        }
        check(index, model, table, "seed \(seed) after the inserts")
        for (step, id) in order.shuffled(using: &generator).prefix(28_000).enumerated() {
            index.set(nil, for: id)
            model[id] = nil
            if step % 7_000 == 0 { check(index, model, table, "seed \(seed) removal \(step)") }
        }
        check(index, model, table, "seed \(seed) after the removals")
        for id in order.prefix(10_000) {
            let value = Int64.random(in: 0..<40, using: &generator)
            index.set(value, for: id)
            model[id] = value
        }
        check(index, model, table, "seed \(seed) after the refill")
        for id in order.prefix(10_000) { index.set(nil, for: id) }
        for id in order.prefix(10_000) { model[id] = nil }
        check(index, model, table, "seed \(seed) after emptying the refill")
    }

    @Test("reading several top-level members in one pass gives what reading each path gives")
    func membersInOnePass() {
        let documents = [
            #"{"id":1,"likes":12,"posted":1700000000000,"title":"Post number 1"}"#,
            #"{"likes":-3.5e2, "id": "x", "likes": 7}"#,
            #"{"a":{"likes":1},"likes":[1,2],"posted":null,"id":true}"#,
            #"{"li\u006bes":4,"posted":"2024-01-02T03:04:05Z"}"#,
            #"{"id":1,"likes":2,"#,
            #"{"id":{"x":[1,{"y":"}"}]},"likes":9}"#,
            #"{"id":1 "likes":2}"#,
            #"[1,2]"#, #""#, #"{}"#, #"{"posted":12.75,"id":-0}"#,
        ]
        let names = ["likes", "posted", "id", "likes", "absent"]
        for document in documents {
            let bytes = Array(document.utf8)
            bytes.withUnsafeBytes { buffer in
                let together = JSONPathScanner.scalars(ofMembers: names, in: buffer)
                let oneByOne = names.map { JSONPathScanner.scalar(at: [$0], in: buffer) }
                #expect(together == oneByOne, "\(document)")
            }
        }
    }

    @Test(
        "members skipped before the one read are passed over whatever number they hold, as a JSON parser reads them",
        arguments: [1, 2, 3] as [UInt64])
    func skippedNumbersAgreeWithJSONSerialization(seed: UInt64) throws {
        var generator = SplitMix(seed: seed)
        let numbers = [
            "0", "-0", "7", "-12", "123456789012345678", "1234567890123456789", "-12345678901234567890", "1.5",
            "-2.25e3", "1E2", "3e-2", "99999999999999999999999",
        ]
        for _ in 0..<500 {
            // Several skipped members of numbers (and one string), then the member read.
            var members = (0..<Int.random(in: 1...4, using: &generator)).map { position in
                "\"m\(position)\":\(numbers.randomElement(using: &generator)!)"
            }
            members.append(#""s":"a,\"b""#)
            members.shuffle(using: &generator)
            let likes = Int64.random(in: -1_000_000...1_000_000, using: &generator)
            let document =
                "{" + members.joined(separator: Bool.random(using: &generator) ? "," : " , ")
                + ",\"likes\":\(likes)}"
            let parsed = try #require(
                try JSONSerialization.jsonObject(with: Data(document.utf8)) as? [String: Any],
                "seed \(seed): \(document)")
            #expect((parsed["likes"] as? NSNumber)?.int64Value == likes, "seed \(seed): \(document)")
            let scanned = Array(document.utf8).withUnsafeBytes {
                JSONPathScanner.scalars(ofMembers: ["likes", "absent"], in: $0)
            }
            #expect(scanned == [.number(Double(likes), exactInteger: likes), nil], "seed \(seed): \(document)")
        }
    }

    /// Checks `index` against `model`; `context` (the seed and step) names every failure.
    private func check(_ index: OrderedIndex<Int64>, _ model: [UInt32: Int64], _ table: KeyTable, _ context: Comment) {
        let expected = model.sorted { a, b in
            a.value != b.value
                ? a.value < b.value
                : table.key(of: a.key).utf8.lexicographicallyPrecedes(
                    table.key(of: b.key).utf8)
        }
        var walked: [UInt32] = []
        index.forEachAscending(from: index.start, to: index.end) { _, id in
            walked.append(id)
            return true
        }
        #expect(walked == expected.map(\.key), context)
        #expect(index.count == model.count, context)
        #expect(index.structureProblem() == nil, context)
        for bound in [Int64(-1), 0, 7, 25, 49, 50] {
            let from = index.position(atOrAfter: bound, inclusive: true)
            #expect(index.distance(from: from, to: index.end) == model.values.filter { $0 >= bound }.count, context)
            let to = index.position(atOrAfter: bound + 10, inclusive: false)
            let between = model.values.filter { $0 >= bound && $0 <= bound + 10 }.count
            #expect(index.distance(from: from, to: to) == between, context)
            var visited = 0
            index.forEachAscending(from: from, to: to) { _, _ in
                visited += 1
                return true
            }
            #expect(visited == between, context)
        }
        var descending: [UInt32] = []
        index.forEachDescending(from: index.start, to: index.end) { _, id in
            descending.append(id)
            return true
        }
        #expect(descending == expected.map(\.key).reversed(), context)
        // Positions at (value, key): the elements after each sampled one, counted both ways.
        for (rank, element) in expected.enumerated() where rank % 97 == 0 {
            let key = table.key(of: element.key)
            let at = index.position(atOrAfter: element.value, key: key, inclusive: true)
            let after = index.position(atOrAfter: element.value, key: key, inclusive: false)
            #expect(index.distance(from: index.start, to: at) == rank, context)
            #expect(index.distance(from: at, to: after) == 1, context)
            var below: [UInt32] = []
            index.forEachDescending(from: index.start, to: at) { _, id in
                below.append(id)
                return below.count < 3
            }
            #expect(below == expected[max(0, rank - 3)..<rank].map(\.key).reversed(), context)
        }
    }
}
