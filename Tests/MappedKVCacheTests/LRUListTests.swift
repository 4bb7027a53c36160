// The indexed recency list under long random runs, with and without colliding hashes.
//
// Invariant: after every step the list agrees with a `Dictionary` and an order array, and its own
// invariant check (links, free list, index probing) passes.

import Testing

@testable import MappedKVCache

@Suite("LRUList")
struct LRUListTests {
    @Test("random stores and removals keep the list and its index sound", arguments: [false, true])
    func randomRuns(colliding: Bool) {
        var random = MemoryCacheTestRandom(seed: colliding ? 7 : 8)
        var list = LRUList<MemoryCacheTestKey, Int>()
        var expected: [Int: Int] = [:]
        var order: [Int] = []  // least recently used first
        for step in 0..<6_000 {
            let key = Int.random(in: 0..<1_500, using: &random)
            let testKey = MemoryCacheTestKey(key, colliding: colliding)
            switch Int.random(in: 0..<10, using: &random) {
            case 0..<5:
                let replaced = list.store(step, forKey: testKey, cost: 1, time: Int64(step), expiry: .max)
                #expect(replaced == expected.updateValue(step, forKey: key))
                order.removeAll { $0 == key }
                order.append(key)
            case 5..<8:
                let index = list.find(testKey)
                #expect((index != nil) == (expected[key] != nil))
                if let index {
                    #expect(list.remove(index) == (testKey, expected.removeValue(forKey: key)!))
                    order.removeAll { $0 == key }
                }
            default:
                if let index = list.find(testKey) {
                    list.touch(index, time: Int64(step))
                    order.removeAll { $0 == key }
                    order.append(key)
                }
            }
            if step.isMultiple(of: 500) || step == 5_999 {
                #expect(list.invariantViolation() == nil, "step \(step)")
                #expect(list.indicesLeastRecentFirst.map { list.key(at: $0).value } == order)
                #expect(expected.allSatisfy { list.find(MemoryCacheTestKey($0.key, colliding: colliding)) != nil })
            }
            if step == 3_000 {
                let before = list.indicesLeastRecentFirst.map { list.key(at: $0).value }
                list = list.compacted()
                #expect(list.nodes.count == expected.count)
                #expect(list.indicesLeastRecentFirst.map { list.key(at: $0).value } == before)
            }
        }
        #expect(list.count == expected.count && list.totalCost == expected.count)
    }
}
