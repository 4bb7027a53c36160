import Foundation
import Testing

@testable import MappedKV

/// Sweeps in bounded steps: every key present for the whole sweep is offered once, the keys picked
/// go and the others stay, whatever the store does between steps (growth included), a step looks
/// at about the keys asked for, and marks and turn records are never offered.
@Suite struct SweepTests {
    /// Runs a sweep to its end, calling `between` after each step; returns the steps.
    @discardableResult
    func sweep(
        _ store: MappedKV, keyLimit: Int, between: () throws -> Void = {},
        removing shouldRemove: (String, UnsafeRawBufferPointer) -> Bool
    ) throws -> [SweepStep] {
        var steps: [SweepStep] = []
        var cursor: SweepCursor? = .start
        while let from = cursor {
            let step = try store.sweepStep(from: from, keyLimit: keyLimit, removing: shouldRemove)
            steps.append(step)
            cursor = step.next
            try between()
        }
        return steps
    }

    /// Whether the payload of an `Int64` value is odd (its varint's lowest bit).
    static func isOdd(_ payload: UnsafeRawBufferPointer) -> Bool { (payload.first ?? 0) & 1 == 1 }

    @Test("each key is offered exactly once and the picked ones go")
    func offersEachKeyOnce() throws {
        let dir = TemporaryDirectory("sweep-once")
        let store = try MappedKV(id: "s", directory: dir.path)
        for index in 0..<20_000 { try store.set(Int64(index), forKey: "key-\(index)") }
        var offered: [String: Int] = [:]
        let steps = try sweep(store, keyLimit: 500) { key, payload in
            offered[key, default: 0] += 1
            return Self.isOdd(payload)
        }
        #expect(offered.count == 20_000 && offered.values.allSatisfy { $0 == 1 })
        #expect(steps.reduce(0) { $0 + $1.removed } == 10_000)
        #expect(try store.count == 10_000)
        #expect(try store.allKeys.allSatisfy { Int($0.dropFirst(4))!.isMultiple(of: 2) })
        // The hash is seeded and even, so a step's range holds about the keys asked for.
        let busiest = steps.map(\.visited).max() ?? 0
        #expect(busiest <= 1_000, "a step looked at \(busiest) keys for a limit of 500")
        #expect(steps.count >= 30 && steps.count <= 50, "\(steps.count) steps for 20,000 keys at 500 a step")
    }

    @Test("random writes between steps: untouched picks go, nothing else does", arguments: [1, 2, 3, 4, 5, 6])
    func randomWritesBetweenSteps(seed: UInt64) throws {
        let dir = TemporaryDirectory("sweep-model")
        let store = try MappedKV(id: "s", directory: dir.path)
        var random = SplitMix64(seed: seed)
        var model: [String: Int64] = [:]
        for index in 0..<3_000 {
            let value = Int64.random(in: 0..<1_000, using: &random)
            try store.set(value, forKey: "k\(index)")
            model["k\(index)"] = value
        }
        var touched = Set<String>()
        let keyLimit = Int.random(in: 1...400, using: &random)
        // Sets, removals and new keys between steps; now and then a burst that makes the table grow.
        func writeBetweenSteps() throws {
            let burst = Int.random(in: 0..<10, using: &random) == 0 ? 3_000 : 0
            let writes = Int.random(in: 0..<40, using: &random) + burst
            for _ in 0..<writes {
                let key = "k\(Int.random(in: 0..<12_000, using: &random))"
                touched.insert(key)
                if Int.random(in: 0..<5, using: &random) == 0 {
                    try store.removeValue(forKey: key)
                    model[key] = nil
                } else {
                    let value = Int64.random(in: 0..<1_000, using: &random)
                    try store.set(value, forKey: key)
                    model[key] = value
                }
            }
        }
        try sweep(
            store, keyLimit: keyLimit, between: writeBetweenSteps, removing: { _, payload in Self.isOdd(payload) })
        let stored = Dictionary(
            uniqueKeysWithValues: try store.allKeys.map { ($0, try store.value(forKey: $0, as: Int64.self)) })
        for (key, value) in stored {
            #expect(
                model[key] == value,
                "seed \(seed): \(key) holds \(String(describing: value)), the model \(String(describing: model[key]))")
        }
        for (key, value) in model where stored[key] == nil {
            // A key may be gone only if it was picked: odd, and (if written during the sweep) odd when offered.
            #expect(value % 2 == 1, "seed \(seed): \(key) = \(value) was removed but is not picked")
        }
        for (key, value) in model where value % 2 == 1 && !touched.contains(key) {
            #expect(stored[key] == nil, "seed \(seed): \(key) = \(value) was present all along, picked, and kept")
        }
    }

    @Test("expired keys go; marks and turn records are never offered")
    func expiredKeysAndReservedKeys() throws {
        let dir = TemporaryDirectory("sweep-expiry")
        let clock = ManualClock(1_000_000)
        let store = try MappedKV(
            id: "s", directory: dir.path,
            configuration: Configuration(
                clock: clock.expiryClock, keyExpiry: .zero, storeKind: StoreKind(name: "sweep-test", version: "1")))
        for index in 0..<1_000 {
            try store.set(
                Int64(index), forKey: "k\(index)", expiresAfter: index.isMultiple(of: 10) ? .seconds(5) : .zero)
        }
        #expect(try store.beginTurn("tidy", minimumInterval: .zero, lease: .seconds(60)))
        clock.advance(10)
        var offered = 0
        var cursor: SweepCursor? = .start
        var removed = 0
        while let from = cursor {
            let step = try store.sweepStep(from: from, keyLimit: 64) { key, _ in
                offered += 1
                #expect(key.utf8.first != 1, "a reserved key was offered")
                return false
            }
            removed += step.removed
            cursor = step.next
        }
        #expect(removed == 100)
        #expect(offered == 900)
        #expect(try store.count(includingExpired: true) == 900 + 2 + 1)  // two kind marks, one turn record
        var expiredStep = try store.removeExpiredKeysStep(from: .start, keyLimit: 10_000)
        #expect(expiredStep.removed == 0 && expiredStep.next == nil)
        try store.set(Int64(1), forKey: "late", expiresAfter: .seconds(1))
        clock.advance(2)
        expiredStep = try store.removeExpiredKeysStep(from: .start, keyLimit: 10_000)
        #expect(expiredStep.removed == 1)
    }

    @Test func aKeyLimitBelowOneIsRefused() throws {
        let dir = TemporaryDirectory("sweep-limit")
        let store = try MappedKV(id: "s", directory: dir.path)
        #expect(throws: MappedKVError.self) { try store.sweepStep(from: .start, keyLimit: 0) { _, _ in true } }
        #expect(try store.sweepStep(from: .start) { _, _ in true } == SweepStep(removed: 0, visited: 0, next: nil))
        for index in 0..<100 { try store.set(Int64(index), forKey: "k\(index)") }
        // A limit past the store's size is one step over everything, never an overflow.
        let all = try store.sweepStep(from: .start, keyLimit: .max) { _, _ in false }
        #expect(all.visited == 100 && all.next == nil)
    }
}
