// The indexed second-chance queue under long random runs, with and without colliding hashes.
//
// Invariant: after every step the list agrees with a `Dictionary` and a plain array of the queue (each
// key with its mark and the number of its last store or read), and its own invariant check (links,
// sequence numbers, free list, index probing) passes.

import Testing

@testable import MappedKVCache

@Suite("SecondChanceList")
struct SecondChanceListTests {
    /// A key in the plain queue.
    struct Queued: Equatable {
        var key: Int
        var referenced: Bool
        var sequence: Int
    }

    @Test("random stores, reads, evictions and removals keep the list and its index sound", arguments: [false, true])
    func randomRuns(colliding: Bool) {
        var random = MemoryCacheTestRandom(seed: colliding ? 7 : 8)
        var list = SecondChanceList<MemoryCacheTestKey, Int>()
        var expected: [Int: Int] = [:]
        var queue: [Queued] = []  // the next eviction candidate first
        var accesses = 0
        var secondChances = 0
        for step in 0..<6_000 {
            let key = Int.random(in: 0..<1_500, using: &random)
            let testKey = MemoryCacheTestKey(key, colliding: colliding)
            switch Int.random(in: 0..<12, using: &random) {
            case 0..<5:
                let replaced = list.store(step, forKey: testKey, cost: 1, time: Int64(step), expiry: .max)
                #expect(replaced == expected.updateValue(step, forKey: key))
                queue.removeAll { $0.key == key }
                queue.append(Queued(key: key, referenced: false, sequence: accesses))
                accesses += 1
            case 5..<7:
                let index = list.find(testKey)
                #expect((index != nil) == (expected[key] != nil))
                if let index {
                    #expect(list.remove(index) == (testKey, expected.removeValue(forKey: key)!))
                    queue.removeAll { $0.key == key }
                }
            case 7..<10:
                #expect((list.locate(testKey) != nil) == (expected[key] != nil))
                if let (index, slot) = list.locate(testKey) {
                    #expect(list.find(testKey) == index)
                    #expect(list.value(inSlot: slot) == expected[key])
                    #expect(list.value(at: index) == expected[key])
                    list.touch(index, time: Int64(step))
                    let position = queue.firstIndex { $0.key == key }!
                    queue[position].referenced = true
                    queue[position].sequence = accesses
                    accesses += 1
                }
            default:
                guard !queue.isEmpty else { break }
                let victim = list.nextVictim()
                while queue[0].referenced {
                    var entry = queue.removeFirst()
                    entry.referenced = false
                    queue.append(entry)
                    secondChances += 1
                }
                #expect(list.key(at: victim).value == queue[0].key)
                #expect(list.remove(victim).value == expected.removeValue(forKey: queue.removeFirst().key))
            }
            if step.isMultiple(of: 500) || step == 5_999 {
                #expect(list.invariantViolation() == nil, "step \(step)")
                #expect(list.indicesInQueueOrder.map { list.key(at: $0).value } == queue.map(\.key))
                #expect(list.indicesInQueueOrder.map { list.isReferenced($0) } == queue.map(\.referenced))
                #expect(
                    list.indicesLeastRecentFirst.map { list.key(at: $0).value }
                        == queue.sorted { $0.sequence < $1.sequence }.map(\.key))
                #expect(expected.allSatisfy { list.find(MemoryCacheTestKey($0.key, colliding: colliding)) != nil })
            }
            if step == 3_000 {
                let before = list.indicesInQueueOrder.map { list.key(at: $0).value }
                let marks = list.indicesInQueueOrder.map { list.isReferenced($0) }
                list = list.compacted()
                #expect(list.nodes.count == expected.count)
                #expect(list.invariantViolation() == nil)
                #expect(list.indicesInQueueOrder.map { list.key(at: $0).value } == before)
                #expect(list.indicesInQueueOrder.map { list.isReferenced($0) } == marks)
            }
        }
        #expect(list.count == expected.count && list.totalCost == expected.count)
        #expect(secondChances > 100, "\(secondChances) second chances")
    }
}
