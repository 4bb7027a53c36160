import ArgumentParser
import Foundation
import MappedKV

// `mappedkv bench --tidy`: what removing expired keys does to another process's gets and sets.
// A store of `--tidy-keys` keys, a tenth of them expired (for the tidying process), is tidied once
// in bounded steps (`removeExpiredKeysStep`, with `--tidy-pause-microseconds` between steps, as
// the drivers pause) and once in a single exclusive section (the whole walk under one lock, as a
// tidy did before steps), each while a second process (`mappedkv tidy-load`) gets and sets. Its
// operations are split into those that began during the tidy and the rest.
extension BenchCommand {
    /// Runs both tidies and prints, for each, the steps' longest and 99th-percentile durations and
    /// the other process's p50/p99/max get and set latency during the tidy and outside it.
    func measureTidy() throws {
        for mode in ["steps", "one_section"] {
            let store = try fillTidyStore()
            let outPath = "\(root)/tidy-load-\(mode).txt"
            let load = Process()
            load.executableURL = URL(fileURLWithPath: CommandLine.arguments[0])
            load.arguments = [
                "tidy-load", "--root", root, "--id", "bench-tidy", "--keys", "\(tidyKeys)", "--milliseconds", "6000",
                "--out", outPath,
            ]
            let pipe = Pipe()
            load.standardOutput = pipe
            try load.run()
            // The load process says when its store is open; a second of its operations comes before the tidy.
            _ = pipe.fileHandleForReading.availableData
            Thread.sleep(forTimeInterval: 1)
            var steps: [Double] = []
            var plainSteps: [Double] = []  // steps with neither a write-back nor a growth
            var removed = 0
            let tidyStart = DispatchTime.now().uptimeNanoseconds
            if mode == "steps" {
                var cursor: SweepCursor? = .start
                while let from = cursor {
                    var step: SweepStep?
                    let before = (try store.totalSize, try store.actualSize)
                    let duration = try elapsedNanoseconds {
                        step = try store.removeExpiredKeysStep(from: from, keyLimit: tidyStepKeys)
                    }
                    // A compaction (this step's, or another process's that the step reloads)
                    // shrinks the data; a growth changes the file's size. The other steps are
                    // the bounded ones.
                    let after = (try store.totalSize, try store.actualSize)
                    if after.0 == before.0 && after.1 >= before.1 { plainSteps.append(duration) }
                    steps.append(duration)
                    removed += step?.removed ?? 0
                    cursor = step?.next
                    if tidyPauseMicroseconds > 0 { usleep(UInt32(tidyPauseMicroseconds)) }
                }
            } else {
                steps.append(
                    try elapsedNanoseconds {
                        try store.withExclusiveLock { _ in
                            var cursor: SweepCursor? = .start
                            while let from = cursor {
                                let step = try store.removeExpiredKeysStep(from: from)
                                removed += step.removed
                                cursor = step.next
                            }
                        }
                    })
            }
            let tidyEnd = DispatchTime.now().uptimeNanoseconds
            load.waitUntilExit()
            store.close()
            guard removed == tidyKeys / 10 else {
                printError("benchmark check failed: the \(mode) tidy removed \(removed) keys, not \(tidyKeys / 10)")
                throw ExitCode.failure
            }
            let timings = try TidyTiming.read(from: outPath)
            try? FileManager.default.removeItem(atPath: outPath)
            let during = timings.filter { $0.start >= tidyStart && $0.start < tidyEnd }
            let outside = timings.filter { $0.start < tidyStart || $0.start >= tidyEnd }
            var lines: [(String, Double)] = [
                ("tidy_\(mode)_total_us", Double(tidyEnd - tidyStart) / 1000),
                ("tidy_\(mode)_steps", Double(steps.count)),
                ("tidy_\(mode)_step_max_us", (steps.max() ?? 0) / 1000),
                ("tidy_\(mode)_step_p50_us", Self.percentile(steps, 0.5) / 1000),
                ("tidy_\(mode)_step_p99_us", Self.percentile(steps, 0.99) / 1000),
                ("tidy_\(mode)_steps_over_5ms", Double(steps.filter { $0 > 5_000_000 }.count)),
            ]
            if mode == "steps" {
                lines.append(("tidy_\(mode)_steps_with_writeback_or_growth", Double(steps.count - plainSteps.count)))
                lines.append(("tidy_\(mode)_other_steps_max_us", (plainSteps.max() ?? 0) / 1000))
            }
            // The load process's own write-backs (its sets fill the file) stall a set by about the
            // time a write-back of the store takes, with or without a tidy: their rate is printed
            // for both windows, so that one in the tidy's window is not taken for the tidy's.
            let seconds = (during: Double(tidyEnd - tidyStart) / 1e9, outside: 6.0 - Double(tidyEnd - tidyStart) / 1e9)
            for (phase, ops) in [("during", during), ("outside", outside)] {
                for (kind, isSet) in [("get", false), ("set", true)] {
                    let latencies = ops.filter { $0.isSet == isSet }.map { Double($0.nanoseconds) }
                    lines.append(("tidy_\(mode)_\(phase)_\(kind)_count", Double(latencies.count)))
                    lines.append(("tidy_\(mode)_\(phase)_\(kind)_p50_us", Self.percentile(latencies, 0.5) / 1000))
                    lines.append(("tidy_\(mode)_\(phase)_\(kind)_p99_us", Self.percentile(latencies, 0.99) / 1000))
                    lines.append(("tidy_\(mode)_\(phase)_\(kind)_p999_us", Self.percentile(latencies, 0.999) / 1000))
                    lines.append(("tidy_\(mode)_\(phase)_\(kind)_max_us", (latencies.max() ?? 0) / 1000))
                    let slow = Double(latencies.filter { $0 > 10_000_000 }.count)
                    let length = phase == "during" ? seconds.during : seconds.outside
                    lines.append(("tidy_\(mode)_\(phase)_\(kind)_over_10ms_per_s", slow / length))
                }
            }
            for (name, value) in lines { print("\(name)\t\(String(format: "%.1f", value))") }
        }
    }

    /// A fresh multi-process store of `tidyKeys` keys with key expiry on, a tenth of them
    /// expiring in an hour, opened with a clock two hours ahead: expired for the tidy, alive for the
    /// load process, whose write-backs would otherwise drop them before the tidy begins.
    private func fillTidyStore() throws -> MappedKV {
        var configuration = Configuration(
            isMultiProcess: true, expectedCapacity: tidyKeys, keyExpiry: .zero, processLock: access.lock,
            usesIndexFile: !access.noIndexFile)
        let filled = try fresh("bench-tidy", configuration)
        for index in 0..<tidyKeys {
            try filled.set(Int64(index), forKey: "k\(index)", expiresAfter: index % 10 == 0 ? .seconds(3600) : .zero)
        }
        filled.close()
        configuration.clock = ExpiryClock(preciseNow: { ExpiryClock.system.preciseNow() + .seconds(7200) })
        return try MappedKV(id: "bench-tidy", directory: root, configuration: configuration, logger: access.logger)
    }

    /// The `fraction` percentile of `values` (nearest rank); 0 for none.
    static func percentile(_ values: [Double], _ fraction: Double) -> Double {
        guard !values.isEmpty else { return 0 }
        let sorted = values.sorted()
        return sorted[min(sorted.count - 1, Int((Double(sorted.count) * fraction).rounded(.up)) - 1)]
    }
}
