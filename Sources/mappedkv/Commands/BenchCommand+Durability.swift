import ArgumentParser
import Foundation
import MappedKV

// `mappedkv bench --durability`: what each durability level costs a set and a batch, beside the
// default, on the same disk in the same run.
extension BenchCommand {
    /// The levels compared, by name; the interval is short enough for the run to meet it often.
    static let durabilityLevels: [(name: String, level: Durability)] = [
        ("at_sync", .atSync), ("every_write", .everyWrite), ("interval_10ms", .interval(.milliseconds(10))),
    ]

    /// Times `durabilitySets` sets and as many keys written 100 per batch at every level, and
    /// prints each in nanoseconds per key and as a ratio to the default level.
    ///
    /// Every write flushes twice at `everyWrite`, so it runs a hundredth of the sets (at least 100).
    func measureDurability(_ base: Configuration) throws {
        var results: [(String, Double)] = []
        var defaults: (set: Double, batch: Double) = (0, 0)
        for (name, level) in Self.durabilityLevels {
            let count = level == .everyWrite ? max(100, durabilitySets / 100) : durabilitySets
            let keys = (0..<count).map { "durable-\($0)" }
            var configuration = base
            configuration.durability = level
            let store = try fresh("bench-durability", configuration)
            let sets = try elapsedNanoseconds {
                for (i, key) in keys.enumerated() { try store.set(Int32(truncatingIfNeeded: i), forKey: key) }
            }
            let batches = try elapsedNanoseconds {
                for start in stride(from: 0, to: keys.count, by: 100) {
                    try store.batch { batch in
                        for i in start..<min(start + 100, keys.count) {
                            try batch.set(Int32(truncatingIfNeeded: i &+ 1), forKey: keys[i])
                        }
                    }
                }
            }
            guard try store.int32(forKey: keys[keys.count - 1]) == Int32(truncatingIfNeeded: keys.count) else {
                printError("benchmark check failed: the \(name) store lost its last batch")
                throw ExitCode.failure
            }
            store.close()
            let perSet = sets / Double(keys.count)
            let perBatchedKey = batches / Double(keys.count)
            if level == .atSync { defaults = (perSet, perBatchedKey) }
            results.append(("durability_\(name)_set_int32", perSet))
            results.append(("durability_\(name)_batch_set_int32", perBatchedKey))
            results.append(("durability_\(name)_set_ratio_x1000", 1000 * perSet / defaults.set))
            results.append(("durability_\(name)_batch_ratio_x1000", 1000 * perBatchedKey / defaults.batch))
        }
        for (name, value) in results { print("\(name)\t\(Int(value.rounded()))") }
    }
}
