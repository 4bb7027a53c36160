import Foundation
import MappedKV
import Testing

@testable import MappedKVCollections

/// Random sequences of put, remove, import, clear, bucket removal, index add and drop, and reopen,
/// over two buckets, against a dictionary per bucket: after every step each bucket's count, keys
/// and indexed count agree with the model.
@Suite("Count model")
struct CountModelTests {
    /// The seeds run; a failure names its seed, which alone replays the sequence.
    static let seeds: [UInt64] = (0..<40).map { 0xC0_0000 + $0 }

    @Test("random sequences keep count, keys and indexes equal to a dictionary model", arguments: seeds)
    func randomSequence(seed: UInt64) throws {
        let dir = try ScratchDirectory()
        var generator = SplitMix(seed: seed)
        func pick(_ count: Int) -> Int { Int(generator.next() % UInt64(count)) }
        let names = ["a", "a:"]
        let keys = (0..<10).map { "k\($0)" } + ["", "é", "k1:"]
        var collections = try CollectionStore(id: "model", directory: dir.path)
        var buckets = names.map { collections.bucket($0, of: Int.self, cacheLimit: 3) }
        var model: [[String: Int]] = [[:], [:]]
        var indexed = [false, false]
        for step in 0..<150 {
            let which = pick(2)
            let bucket = buckets[which]
            let context: Comment = "seed \(seed) step \(step)"
            switch pick(20) {
            case 0..<9:
                let key = keys[pick(keys.count)]
                let value = pick(5)
                try bucket.put(value, forKey: key, metadata: ["v": .int(Int64(value))])
                model[which][key] = value
            case 9..<13:
                let key = keys[pick(keys.count)]
                #expect(try bucket.remove(key) == (model[which].removeValue(forKey: key) != nil), context)
            case 13:
                let now = Date()
                let batch = (0..<pick(4)).map { _ in
                    let value = pick(5)
                    return Entry(
                        bucket: names[which], key: keys[pick(keys.count)], value: value,
                        metadata: ["v": .int(Int64(value))], created: now, modified: now)
                }
                try bucket.importEntries(batch)
                for entry in batch { model[which][entry.key] = entry.value }
            case 14:
                #expect(try bucket.removeAll() == model[which].count, context)
                model[which] = [:]
            case 15:
                #expect(try collections.removeBucket(names[which]) == model[which].count, context)
                model[which] = [:]
                indexed[which] = false
            case 16:
                if indexed[which] {
                    try bucket.removeIndex("v")
                } else {
                    try bucket.addIndex("v", type: .int, source: .metadata("v"))
                }
                indexed[which].toggle()
            default:
                collections.close()
                collections = try CollectionStore(id: "model", directory: dir.path)
                buckets = names.map { collections.bucket($0, of: Int.self, cacheLimit: 3) }
            }
            for (position, bucket) in buckets.enumerated() {
                let expected = model[position]
                #expect(try bucket.count == expected.count, "\(context): bucket \(names[position]) count")
                let sorted = expected.keys.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
                #expect(try bucket.keys() == sorted, "\(context): bucket \(names[position]) keys")
                #expect(try bucket.indexDefinitions().map(\.name) == (indexed[position] ? ["v"] : []), context)
                if indexed[position] {
                    let bound = Int64(pick(5))
                    let matching = expected.values.filter { Int64($0) >= bound }.count
                    #expect(try bucket.count(where: [.greaterOrEqual("v", .int(bound))]) == matching, context)
                }
            }
        }
        collections.close()
    }
}
