// Random operation sequences on `MemoryCache`, each step checked against `MemoryCacheReferenceModel`.
//
// Invariant: every sequence is a pure function of its seed, so a failure names the seed that replays it.

import Testing

@testable import MappedKVCache

@Suite("MemoryCache against a reference model")
struct MemoryCacheModelTests {
    /// One step of a sequence.
    enum Operation: CustomStringConvertible {
        case get(Int)
        case set(key: Int, value: Int, cost: Int, timeToLive: Int64?)
        case remove(Int)
        case contains(Int)
        case advance(Int64)
        case trimToCount(Int)
        case trimToCost(Int)
        case trimToAge(Int64)
        case removeExpired
        case sweep
        case memoryPressure
        case removeAll
        case setLimits(MemoryCacheLimits)
        case setFraction(Double)
        case resetStatistics

        var description: String {
            switch self {
            case .get(let key): "get(\(key))"
            case .set(let key, let value, let cost, let ttl):
                "set(\(key)=\(value), cost \(cost), ttl \(ttl.map(String.init) ?? "-"))"
            case .remove(let key): "remove(\(key))"
            case .contains(let key): "contains(\(key))"
            case .advance(let nanoseconds): "advance(\(nanoseconds / 1_000_000) ms)"
            case .trimToCount(let count): "trim(toCount: \(count))"
            case .trimToCost(let cost): "trim(toCost: \(cost))"
            case .trimToAge(let age): "trim(toAge: \(age / 1_000_000) ms)"
            case .removeExpired: "removeExpiredValues()"
            case .sweep: "trimExpiredAndAged()"
            case .memoryPressure: "handleMemoryPressure()"
            case .removeAll: "removeAll()"
            case .setLimits(let limits): "limits = \(limits)"
            case .setFraction(let fraction): "memoryPressureFraction = \(fraction)"
            case .resetStatistics: "resetStatistics()"
            }
        }
    }

    static let sequencesPerBatch = 100
    static let stepsPerSequence = 200
    static let millisecond: Int64 = 1_000_000

    @Test("1,000 seeded random sequences match the model step by step", arguments: 0..<10)
    func randomSequencesMatchTheModel(batch: Int) {
        var coverage = Coverage()
        for sequence in 0..<Self.sequencesPerBatch {
            let seed = UInt64(batch * Self.sequencesPerBatch + sequence)
            if let failure = Self.run(seed: seed, coverage: &coverage) {
                Issue.record("seed \(seed): \(failure)")
                return
            }
        }
        // The sequences must reach every rule, or agreeing with the model proves little.
        #expect(coverage.reasons == Set(MemoryCacheEvictionReason.allCases))
        #expect(coverage.hits > 1_000, "\(coverage.hits) hits")
        #expect(coverage.misses > 1_000, "\(coverage.misses) misses")
        #expect(coverage.compactions > 0)
        #expect(coverage.secondChances > 100, "\(coverage.secondChances) second chances")
    }

    /// What a batch of sequences exercised.
    struct Coverage {
        var reasons: Set<MemoryCacheEvictionReason> = []
        var hits = 0
        var misses = 0
        var compactions = 0
        var secondChances = 0
    }

    /// Runs the sequence of `seed`; returns a description of the first divergence, or `nil`.
    static func run(seed: UInt64, coverage: inout Coverage) -> String? {
        var random = MemoryCacheTestRandom(seed: seed)
        let limits = randomLimits(&random)
        let fraction = randomFraction(&random)
        let clock = MemoryCacheTestClock()
        let log = MemoryCacheEvictionLog<MemoryCacheTestKey, Int>()
        let cache = MemoryCache<MemoryCacheTestKey, Int>(
            limits: limits, trimInterval: nil, memoryPressureFraction: fraction, clock: clock.clock,
            onEviction: log.handler)
        var model = MemoryCacheReferenceModel(limits: limits, fraction: fraction)
        // Odd seeds use keys whose hashes collide, to drive the index through long probe sequences.
        let colliding = seed % 2 == 1
        var history: [String] = ["limits \(limits), fraction \(fraction), colliding keys \(colliding)"]
        for step in 0..<stepsPerSequence {
            let operation = randomOperation(&random, present: model.entries.map(\.key))
            history.append(operation.description)
            let capacity = cache.slotCapacity
            let (actual, expected) = apply(operation, to: cache, colliding: colliding, clock: clock, model: &model)
            coverage.reasons.formUnion(model.log.map(\.reason))
            if cache.slotCapacity < capacity { coverage.compactions += 1 }
            if case .get = operation {
                if expected == "nil" { coverage.misses += 1 } else { coverage.hits += 1 }
            }
            let mismatch = compare(cache: cache, log: log, model: &model, actual: actual, expected: expected)
            if let mismatch {
                return "step \(step): \(mismatch)\n  " + history.suffix(12).joined(separator: "\n  ")
            }
            if case .set = operation, !limitsHold(cache, model) {
                return "step \(step): limits broken after a set\n  " + history.suffix(6).joined(separator: "\n  ")
            }
            if case .setLimits = operation, !limitsHold(cache, model) {
                return "step \(step): limits broken after changing them"
            }
            if case .sweep = operation, !model.holdsNothingOlder() {
                return "step \(step): an entry past the age limit survived a sweep"
            }
            if case .trimToAge(let age) = operation, !model.holdsNothingOlder(than: age) {
                return "step \(step): an entry past the age survived trim(toAge:)"
            }
        }
        coverage.secondChances += model.secondChances
        return nil
    }

    /// Applies `operation` to both sides and returns what each answered, if anything.
    static func apply(
        _ operation: Operation, to cache: MemoryCache<MemoryCacheTestKey, Int>, colliding: Bool,
        clock: MemoryCacheTestClock, model: inout MemoryCacheReferenceModel
    ) -> (actual: String, expected: String) {
        let key = { (value: Int) in MemoryCacheTestKey(value, colliding: colliding) }
        switch operation {
        case .get(let value):
            return (String(describing: cache.value(forKey: key(value))), String(describing: model.get(value)))
        case .set(let keyValue, let value, let cost, let ttl):
            cache.set(value, forKey: key(keyValue), cost: cost, timeToLive: ttl.map { .nanoseconds($0) })
            model.set(value, forKey: keyValue, cost: cost, timeToLive: ttl)
        case .remove(let value):
            return (String(describing: cache.removeValue(forKey: key(value))), String(describing: model.remove(value)))
        case .contains(let value):
            return (String(cache.contains(key(value))), String(model.contains(value)))
        case .advance(let nanoseconds):
            clock.advance(by: .nanoseconds(nanoseconds))
            model.advance(by: nanoseconds)
        case .trimToCount(let count):
            cache.trim(toCount: count)
            model.trim(toCount: count)
        case .trimToCost(let cost):
            cache.trim(toCost: cost)
            model.trim(toCost: cost)
        case .trimToAge(let age):
            cache.trim(toAge: .nanoseconds(age))
            model.trim(toAge: age)
        case .removeExpired:
            cache.removeExpiredValues()
            model.removeExpired()
        case .sweep:
            cache.trimExpiredAndAged()
            model.sweep()
        case .memoryPressure:
            cache.handleMemoryPressure()
            model.handleMemoryPressure()
        case .removeAll:
            cache.removeAll()
            model.removeAll()
        case .setLimits(let limits):
            cache.limits = limits
            model.setLimits(limits)
        case .setFraction(let fraction):
            cache.memoryPressureFraction = fraction
            model.fraction = fraction
        case .resetStatistics:
            cache.resetStatistics()
            model.resetStatistics()
        }
        return ("", "")
    }

    /// Compares everything observable; returns a description of the first difference, or `nil`.
    static func compare(
        cache: MemoryCache<MemoryCacheTestKey, Int>, log: MemoryCacheEvictionLog<MemoryCacheTestKey, Int>,
        model: inout MemoryCacheReferenceModel,
        actual: String, expected: String
    ) -> String? {
        if actual != expected { return "answered \(actual), model \(expected)" }
        let entries = cache.entriesInEvictionOrder.map { "\($0.key.value)=\($0.value)/\($0.cost)" }
        let modelEntries = model.entries.map { "\($0.key)=\($0.value)/\($0.cost)" }
        if entries != modelEntries { return "entries (queue order) \(entries), model \(modelEntries)" }
        if cache.keysInEvictionOrder.map(\.value) != model.entries.map(\.key) {
            return "keysInEvictionOrder differ"
        }
        let listed = cache.entries().map(\.key.value)
        if listed != model.liveKeysLeastRecentFirst {
            return "entries() \(listed), model \(model.liveKeysLeastRecentFirst)"
        }
        let evictions = log.drain().map {
            MemoryCacheReferenceModel.Record(key: $0.key.value, value: $0.value, reason: $0.reason)
        }
        if evictions != model.log { return "evictions \(evictions), model \(model.log)" }
        model.log.removeAll()
        if cache.statistics != model.statistics { return "statistics \(cache.statistics), model \(model.statistics)" }
        if cache.count != model.count || cache.totalCost != model.totalCost { return "count or total cost differ" }
        if let violation = cache.invariantViolation() { return "invariant broken: \(violation)" }
        return nil
    }

    static func limitsHold(_ cache: MemoryCache<MemoryCacheTestKey, Int>, _ model: MemoryCacheReferenceModel) -> Bool {
        let limits = cache.limits
        if let count = limits.count, cache.count > count { return false }
        if let cost = limits.totalCost, cache.totalCost > cost { return false }
        return model.limitsHold
    }

    // MARK: - Random choices

    static func randomLimits(_ random: inout MemoryCacheTestRandom) -> MemoryCacheLimits {
        MemoryCacheLimits(
            count: Bool.random(using: &random) ? Int.random(in: 0...12, using: &random) : nil,
            totalCost: Bool.random(using: &random) ? Int.random(in: 0...50, using: &random) : nil,
            age: Int.random(in: 0..<3, using: &random) == 0
                ? .milliseconds(Int.random(in: 0...200, using: &random)) : nil)
    }

    static func randomFraction(_ random: inout MemoryCacheTestRandom) -> Double {
        [0, 0.25, 0.5, 0.75, 1].randomElement(using: &random)!
    }

    /// A random operation; lookups and removals mostly name keys the model holds, so that they hit.
    static func randomOperation(_ random: inout MemoryCacheTestRandom, present: [Int]) -> Operation {
        let key =
            !present.isEmpty && Int.random(in: 0..<10, using: &random) < 7
            ? present.randomElement(using: &random)! : Int.random(in: 0..<20, using: &random)
        switch Int.random(in: 0..<100, using: &random) {
        case 0..<34:
            let ttl: Int64? =
                Int.random(in: 0..<3, using: &random) == 0
                ? Int64.random(in: -5...100, using: &random) * millisecond : nil
            return .set(
                key: key, value: Int.random(in: 0..<1_000, using: &random),
                cost: Int.random(in: 0...15, using: &random), timeToLive: ttl)
        case 34..<64: return .get(key)
        case 64..<72: return .remove(key)
        case 72..<77: return .contains(key)
        case 77..<88: return .advance(Int64.random(in: 0...60, using: &random) * millisecond)
        case 88..<90: return .trimToCount(Int.random(in: 0...15, using: &random))
        case 90: return .trimToCost(Int.random(in: 0...60, using: &random))
        case 91: return .trimToAge(Int64.random(in: 0...150, using: &random) * millisecond)
        case 92: return .removeExpired
        case 93: return .sweep
        case 94, 95: return .memoryPressure
        case 96: return .removeAll
        case 97: return .setLimits(randomLimits(&random))
        case 98: return .setFraction(randomFraction(&random))
        default: return .resetStatistics
        }
    }
}
