import ArgumentParser
import Foundation
import MappedKV

/// `mappedkv bench`: times the standard workloads on a fresh store.
struct BenchCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bench",
        abstract: "Time set/get/remove/reopen workloads on a fresh store; prints NAME<TAB>VALUE lines.",
        discussion: """
            set_int32, set_string, get_int32, get_string and remove are nanoseconds per operation; \
            get_int32_random reads the keys of get_int32 in a random order fixed by a seed (so the \
            processor cannot predict the next key's memory); batch_get_int32 is nanoseconds per key of \
            the same random order read 64 keys a call through MappedKV.values(forKeys:as:). reopen_load is nanoseconds for one close, reopen and full load of a store of N Int32 keys, \
            averaged over 5 reopens. batch_set_int32 is nanoseconds per set of N Int32 keys written 100 per \
            MappedKV.batch; small_set_int32 is nanoseconds per set of --small-sets sets round-robin over 10 \
            Int32 keys of a store with default options (a small store that compacts often). \
            Build with -c release for meaningful figures.
            """)

    @Option(name: .long, help: "The directory for the benchmark stores (their files are replaced).")
    var root: String
    @Option(name: .long, help: "Operations per workload.")
    var n: Int = 100_000
    @Option(name: .long, help: "Sets in the small_set_int32 workload (10 keys, round-robin).")
    var smallSets: Int = 1_000_000
    @Flag(
        name: .long,
        help:
            "Instead of the standard workloads, time sets and batches at every durability level (at sync, every write, a 10 ms interval) and print each as a ratio to the default (x1000)."
    )
    var durability = false
    @Option(
        name: .long,
        help: "Sets (and keys in batches of 100) per level with --durability; a hundredth of them at every write.")
    var durabilitySets: Int = 200_000
    @Flag(
        name: .long,
        help:
            "Instead of the standard workloads, tidy a store with a tenth of its keys expired, in bounded steps and in one exclusive section, while another process gets and sets; print its latencies during and outside the tidy."
    )
    var tidy = false
    @Option(name: .long, help: "Keys in the --tidy store.")
    var tidyKeys: Int = 1_000_000
    @Option(name: .long, help: "About how many keys each step of the --tidy store's stepwise tidy looks at.")
    var tidyStepKeys: Int = 2048
    @Option(name: .long, help: "Microseconds the stepwise tidy waits between steps (the drivers wait 1,000).")
    var tidyPauseMicroseconds: Int = 1_000
    /// The key (an encrypted store is benchmarked with it), the mode, the lock and logging.
    @OptionGroup var access: StoreAccessOptions

    func validate() throws {
        guard n > 0 else { throw ValidationError("--n must be positive") }
        guard smallSets > 0 else { throw ValidationError("--small-sets must be positive") }
        guard durabilitySets > 0 else { throw ValidationError("--durability-sets must be positive") }
        guard tidyKeys >= 10 else { throw ValidationError("--tidy-keys must be at least 10") }
        guard tidyStepKeys > 0 else { throw ValidationError("--tidy-step-keys must be positive") }
        guard tidyPauseMicroseconds >= 0 else {
            throw ValidationError("--tidy-pause-microseconds must not be negative")
        }
    }

    func run() throws {
        access.noteLockWithoutMultiProcess()
        let configuration = Configuration(
            isMultiProcess: access.multiProcess, cryptKey: try access.resolvedKey(), processLock: access.lock,
            usesIndexFile: !access.noIndexFile)
        try reportingErrors {
            if tidy {
                try measureTidy()
            } else if durability {
                try measureDurability(configuration)
            } else {
                try measure(configuration)
            }
        }
    }

    func elapsedNanoseconds(_ body: () throws -> Void) rethrows -> Double {
        let start = DispatchTime.now().uptimeNanoseconds
        try body()
        return Double(DispatchTime.now().uptimeNanoseconds - start)
    }

    func fresh(_ id: String, _ configuration: Configuration) throws -> MappedKV {
        for suffix in ["", ".crc", ".writeback", ".lock", ".index"] {
            try? FileManager.default.removeItem(atPath: "\(root)/\(id)\(suffix)")
        }
        return try MappedKV(id: id, directory: root, configuration: configuration, logger: access.logger)
    }

    private func measure(_ configuration: Configuration) throws {
        let intKeys = (0..<n).map { "int-\($0)" }
        let stringKeys = (0..<n).map { "str-\($0)" }
        let strings = (0..<n).map { "string-\($0)" }
        let logger = access.logger
        let store = try fresh("bench", configuration)
        var results: [(String, Double)] = []
        let perOp = Double(n)

        results.append(
            (
                "set_int32",
                try elapsedNanoseconds {
                    for i in 0..<n { try store.set(Int32(truncatingIfNeeded: i), forKey: intKeys[i]) }
                } / perOp
            ))
        results.append(
            (
                "set_string",
                try elapsedNanoseconds {
                    for i in 0..<n { try store.set(strings[i], forKey: stringKeys[i]) }
                } / perOp
            ))
        var sum: Int64 = 0
        results.append(
            (
                "get_int32",
                try elapsedNanoseconds {
                    for i in 0..<n { sum &+= Int64(try store.int32(forKey: intKeys[i]) ?? 0) }
                } / perOp
            ))
        let randomKeys = Self.shuffled(intKeys)
        var randomSum: Int64 = 0
        results.append(
            (
                "get_int32_random",
                try elapsedNanoseconds {
                    for i in 0..<n { randomSum &+= Int64(try store.int32(forKey: randomKeys[i]) ?? 0) }
                } / perOp
            ))
        let groups = stride(from: 0, to: n, by: Self.batchReadSize).map {
            Array(randomKeys[$0..<min($0 + Self.batchReadSize, n)])
        }
        var batchSum: Int64 = 0
        results.append(
            (
                "batch_get_int32",
                try elapsedNanoseconds {
                    for group in groups {
                        for value in try store.values(forKeys: group, as: Int32.self) { batchSum &+= Int64(value ?? 0) }
                    }
                } / perOp
            ))
        var totalBytes = 0
        results.append(
            (
                "get_string",
                try elapsedNanoseconds {
                    for i in 0..<n { totalBytes += try store.string(forKey: stringKeys[i])?.utf8.count ?? 0 }
                } / perOp
            ))
        results.append(
            (
                "remove",
                try elapsedNanoseconds {
                    for i in 0..<n { try store.removeValue(forKey: intKeys[i]) }
                } / perOp
            ))
        store.close()

        let expectedSum = (0..<n).reduce(Int64(0)) { $0 &+ Int64(Int32(truncatingIfNeeded: $1)) }
        let expectedBytes = strings.reduce(0) { $0 + $1.utf8.count }
        guard sum == expectedSum, randomSum == expectedSum, batchSum == expectedSum, totalBytes == expectedBytes else {
            printError(
                "benchmark check failed: sums \(sum), \(randomSum), \(batchSum) (expected \(expectedSum)), "
                    + "bytes \(totalBytes) (expected \(expectedBytes))"
            )
            throw ExitCode.failure
        }

        let loadStore = try fresh("bench-load", configuration)
        for i in 0..<n { try loadStore.set(Int32(truncatingIfNeeded: i), forKey: intKeys[i]) }
        loadStore.close()
        let reopens = 5
        var loadedKeys = 0
        let load = try elapsedNanoseconds {
            for _ in 0..<reopens {
                let reopened = try MappedKV(
                    id: "bench-load", directory: root, configuration: configuration, logger: logger)
                loadedKeys += try reopened.count
                reopened.close()
            }
        }
        guard loadedKeys == n * reopens else {
            printError("benchmark check failed: reopen loaded \(loadedKeys / reopens) keys, expected \(n)")
            throw ExitCode.failure
        }
        results.append(("reopen_load", load / Double(reopens)))
        results.append(("batch_set_int32", try batchSets(intKeys, configuration)))
        results.append(("small_set_int32", try smallStoreSets(configuration)))

        for (name, value) in results { print("\(name)\t\(Int(value.rounded()))") }
    }

    /// Keys a call of batch_get_int32 reads.
    static let batchReadSize = 64

    /// `keys` in a random order fixed by a seed (SplitMix64 and Fisher–Yates), the same every run.
    static func shuffled(_ keys: [String]) -> [String] {
        var state: UInt64 = 0x6765_745F_7261_6E64
        func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
        var result = keys
        for i in stride(from: result.count - 1, to: 0, by: -1) {
            result.swapAt(i, Int(next() % UInt64(i + 1)))
        }
        return result
    }

    /// Nanoseconds per set of `keys.count` Int32 values written 100 per batch on a fresh store.
    private func batchSets(_ keys: [String], _ configuration: Configuration) throws -> Double {
        let store = try fresh("bench-batch", configuration)
        defer { store.close() }
        let perBatch = 100
        let elapsed = try elapsedNanoseconds {
            for batchStart in stride(from: 0, to: keys.count, by: perBatch) {
                try store.batch { batch in
                    for i in batchStart..<min(batchStart + perBatch, keys.count) {
                        try batch.set(Int32(truncatingIfNeeded: i), forKey: keys[i])
                    }
                }
            }
        }
        let last = keys.count - 1
        guard try store.count == keys.count, try store.int32(forKey: keys[last]) == Int32(truncatingIfNeeded: last)
        else {
            printError("benchmark check failed: the batches did not store \(keys.count) keys")
            throw ExitCode.failure
        }
        return elapsed / Double(keys.count)
    }

    /// Nanoseconds per set of `smallSets` Int32 values round-robin over 10 keys of a fresh store.
    private func smallStoreSets(_ configuration: Configuration) throws -> Double {
        let store = try fresh("bench-small", configuration)
        defer { store.close() }
        let keys = (0..<10).map { "small-\($0)" }
        let elapsed = try elapsedNanoseconds {
            for i in 0..<smallSets { try store.set(Int32(truncatingIfNeeded: i), forKey: keys[i % 10]) }
        }
        let last = smallSets - 1
        guard try store.int32(forKey: keys[last % 10]) == Int32(truncatingIfNeeded: last) else {
            printError("benchmark check failed: the small store lost its last set")
            throw ExitCode.failure
        }
        return elapsed / Double(smallSets)
    }
}
