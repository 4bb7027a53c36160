import Foundation
import Testing

@testable import MappedKV

/// A single-process store whose index file describes it opens reading through its mappings
/// (docs/FORMAT.md 12.5): no private copy, gets from the mapped buckets and the data mapping; a
/// write, a walk or an exclusive section loads the private state first. Random operations against
/// a plain dictionary, with reopens, catch every way the two states could disagree.
@Suite("Reads through the mappings")
struct MappedReadsTests {
    static func isMapped(_ store: MappedKV) -> Bool {
        store.shared.core.withLock { $0.readsThroughMappings && $0.mirror.isEmpty && $0.indexOutcome == .mapped }
    }

    @Test("an open after a close maps the store; a write loads the private state; a walk does too")
    func modes() throws {
        let dir = TemporaryDirectory("mapped-modes")
        let store = try MappedKV(id: "s", directory: dir.path)
        for i in 0..<1_000 { try store.set("value \(i)", forKey: "k\(i)") }
        try store.removeValue(forKey: "k5")
        store.close()
        let mapped = try MappedKV(id: "s", directory: dir.path)
        #expect(Self.isMapped(mapped))
        #expect(try mapped.string(forKey: "k999") == "value 999")
        #expect(try mapped.string(forKey: "k5") == nil)
        #expect(try mapped.contains("k6"))
        #expect(try mapped.count == 999)
        #expect(Self.isMapped(mapped), "gets, contains and count keep the mapped state")
        #expect(try mapped.allKeys.count == 999)
        #expect(!Self.isMapped(mapped), "a walk loads the private state")
        try mapped.set("new", forKey: "k5")
        #expect(try mapped.string(forKey: "k5") == "new")
        mapped.close()
        let again = try MappedKV(id: "s", directory: dir.path)
        #expect(Self.isMapped(again))
        try again.set("first write", forKey: "k0")
        #expect(!Self.isMapped(again))
        #expect(try again.string(forKey: "k0") == "first write")
        #expect(try again.count == 1_000)
    }

    @Test("a file changed by hand after a clean close is checked: damage is found as without the index")
    func handDamage() throws {
        let dir = TemporaryDirectory("mapped-damage")
        let store = try MappedKV(id: "s", directory: dir.path)
        for i in 0..<200 { try store.set(Int64(i), forKey: "k\(i)") }
        store.close()
        var data = try #require(fileBytes(dir.file("s")))
        data[50] ^= 0x10
        try writeFile(dir.file("s"), data)
        #expect(throws: MappedKVError.self) {
            _ = try MappedKV(
                id: "s", directory: dir.path, configuration: Configuration(recoveryHandler: { _ in .fail }))
        }
    }

    @Test("random operations and reopens read exactly what a dictionary holds", arguments: 1...8)
    func againstModel(seed: UInt64) throws {
        let dir = TemporaryDirectory("mapped-model-\(seed)")
        var random = SplitMix64(seed: seed)
        var model: [String: Int64] = [:]
        var store = try MappedKV(id: "s", directory: dir.path)
        for step in 0..<3_000 {
            let key = "k\(random.next() % 300)"
            switch random.next() % 100 {
            case 0..<3:
                store.close()
                store = try MappedKV(id: "s", directory: dir.path)
            case 3..<30:
                let value = Int64(bitPattern: random.next())
                try store.set(value, forKey: key)
                model[key] = value
            case 30..<36:
                try store.removeValue(forKey: key)
                model[key] = nil
            case 36:
                try store.trim()
            case 37:
                #expect(try store.count == model.count, "seed \(seed) step \(step)")
            default:
                #expect(try store.int64(forKey: key) == model[key], "seed \(seed) step \(step): \(key)")
                #expect(try store.contains(key) == (model[key] != nil), "seed \(seed) step \(step): \(key)")
            }
        }
        store.close()
        let last = try MappedKV(id: "s", directory: dir.path)
        #expect(Self.isMapped(last))
        try IndexFileTests.expectMatches(last, model, "seed \(seed) at the end")
    }
}
