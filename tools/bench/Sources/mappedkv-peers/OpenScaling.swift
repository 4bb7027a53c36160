import Foundation
import MappedKV

/// What opening a store costs as it grows, and what a process that opens it holds: the baseline
/// for a persisted index, which would let an open skip reading and indexing every record.
///
/// Per N, each store is built once (N sets of the Int32 i under `int-<i>` in key order, timed as
/// `set`, then closed). Then per round, the stores in turn (each round starting one store further
/// along), every store's files already in the page cache:
/// 1. `open_first_get`: in this process, open and get one random key, 5 times (median);
/// 2. `fresh_process`: a new process that opens the store and prints one key, 5 times (median),
///    beside `process_floor`, a start and exit of the same executable doing nothing;
/// 3. `second_process_*`: while this process holds the store open, a child opens it, gets 1,000
///    random keys and reports its memory (single-process: the child alone, no holder);
/// 4. `get_sequential` and `get_random`: steady-state gets on a store freshly opened after the
///    build's close, which has made no write since its open, after a warm-up pass; for MappedKV
///    in a mode that may read through the mappings, the same gets on a store opened with `flock`
///    (the private copy, the reference) and on a store that made one write first (`after_write`);
///    rounds after the first time `set` again on a fresh store;
/// 5. `reader_first_get_after_compaction`: a reader's first get after a writer process
///    overwrote a tenth of the keys and compacted the store (not single-process, where the writer
///    could not open the store beside the reader);
/// 6. `compaction_*`: MappedKV's full write-back in this process with the index file on and off
///    (``OpenScalingCompaction``; not single-process, which writes the file only at its close).
///
/// MappedKV runs as ``OpenScalingMode`` says (``OpenScalingVariant``); MMKV runs through an
/// external driver (``MMKVDriver``), which reports what it can of the same figures.
struct OpenScaling {
    /// Opens (and fresh processes) timed per round; the round's figure is their median.
    static let opens = 5
    /// The random gets of the second process.
    static let secondProcessGets = 1000

    var sizes: [Int]
    var runs: Int
    var root: String
    var kinds: [OpenScalingKind]
    var mmkv: MMKVDriver?
    /// The `mappedkv` command-line tool, MappedKV's fresh process.
    var cli: String
    var indexFile: IndexFileOption
    /// How MappedKV is opened: the lock, or single-process.
    var mode: OpenScalingMode

    var columns: [OpenScalingColumn] {
        kinds.map { $0 == .mappedkv ? .mappedkv : .lmdb } + (mmkv == nil ? [] : [.mmkv])
    }

    func run(progress: (String) -> Void) throws -> OpenScalingResults {
        let sorted = sizes.sorted()
        let keys = (0..<(sorted.last ?? 0)).map { "int-\($0)" }
        var results = OpenScalingResults(
            sizes: sorted, runs: runs, columns: columns, indexFile: indexFile, mode: mode, cli: cli,
            mmkvDriver: mmkv?.path, samples: [:])
        for n in sorted {
            let shuffled = RandomOrder.shuffled(Array(keys[0..<n]), seed: RandomOrder.getSeed)
            let base = try Scratch.directory("\(root)/open-scaling-\(n)")
            defer { try? Scratch.remove(base) }
            for column in columns {
                let start = Clock.nanoseconds()
                let directory = try Scratch.directory("\(base)/\(column.rawValue)")
                if let set = try build(column, keys: keys, n: n, directory: directory) {
                    results.add(.set, column, n, set)
                }
                results.add(.storeFiles, column, n, Double(Scratch.bytes(under: directory)))
                if column == .mappedkv { try checkIndexFile(directory) }
                progress(
                    "N=\(Format.grouped(Double(n))): built \(column.displayName) in "
                        + Format.duration(nanoseconds: Double(Clock.nanoseconds() - start)))
            }
            for round in 0..<runs {
                var line = "N=\(Format.grouped(Double(n))) round \(round + 1)/\(runs):"
                var random = SplitMix64(seed: UInt64(n) &* 0x9E37_79B9 &+ UInt64(round))
                for offset in 0..<columns.count {
                    let column = columns[(offset + round) % columns.count]
                    let start = Clock.nanoseconds()
                    let figures = try measure(
                        column, keys: keys, shuffled: shuffled, n: n, base: base, round: round, random: &random)
                    for (metric, value) in figures { results.add(metric, column, n, value) }
                    if column == .mappedkv && mode.isMultiProcess {
                        let directory = "\(base)/\(column.rawValue)"
                        for pair in try OpenScalingCompaction.measure(
                            keys: keys, n: n, directory: directory, round: round)
                        {
                            results.add(.compaction, column, n, pair.on)
                            results.add(.compactionNoIndexFile, column, n, pair.off)
                            results.add(.compactionRatio, column, n, pair.on / pair.off)
                        }
                    }
                    line +=
                        " \(column.displayName) \(Format.duration(nanoseconds: Double(Clock.nanoseconds() - start)))"
                }
                progress(line)
            }
        }
        return results
    }

    /// Fails unless the index file of the MappedKV store in `directory` exists when the stores keep
    /// one: the build's close writes it, and without it no open could read through the mappings.
    private func checkIndexFile(_ directory: String) throws {
        guard indexFile == .on else { return }
        let path = try StoreLocation(id: MappedKVStore<OpenScalingVariant>.storeID, directory: directory).indexPath
        let size = (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? nil
        guard let size, size > 0 else {
            throw BenchError("MappedKV: no index file at \(path) after the build's close")
        }
    }

    /// Builds `column`'s store of N keys in `directory`: nanoseconds per set, or nil where the
    /// build is not timed (MMKV's `set` comes from the driver's `set-bench`).
    private func build(_ column: OpenScalingColumn, keys: [String], n: Int, directory: String) throws -> Double? {
        switch column {
        case .mappedkv:
            return try OpenScalingMeasurement.fill(
                MappedKVStore<OpenScalingVariant>.self, keys: keys, n: n, directory: directory)
        case .lmdb:
            return try OpenScalingMeasurement.fill(LMDBStore.self, keys: keys, n: n, directory: directory)
        case .mmkv:
            try mmkv?.fill(directory: directory, n: n)
            return nil
        }
    }

    private func measure(
        _ column: OpenScalingColumn, keys: [String], shuffled: [String], n: Int, base: String, round: Int,
        random: inout SplitMix64
    ) throws -> [OpenScalingMetric: Double] {
        let directory = "\(base)/\(column.rawValue)"
        switch column {
        case .mappedkv:
            return try measure(
                MappedKVStore<OpenScalingVariant>.self, keys: keys, shuffled: shuffled, n: n, directory: directory,
                round: round, random: &random)
        case .lmdb:
            return try measure(
                LMDBStore.self, keys: keys, shuffled: shuffled, n: n, directory: directory, round: round,
                random: &random)
        case .mmkv:
            guard let mmkv else { return [:] }
            return try measureMMKV(mmkv, keys: keys, n: n, directory: directory, random: &random)
        }
    }

    /// One round of a store the bench drives itself.
    private func measure<S: OpenScalingStore>(
        _: S.Type, keys: [String], shuffled: [String], n: Int, directory: String, round: Int, random: inout SplitMix64
    ) throws -> [OpenScalingMetric: Double] {
        var figures: [OpenScalingMetric: Double] = [:]
        figures[.openFirstGet] = try OpenScalingMeasurement.openFirstGet(
            S.self, keys: keys, n: n, directory: directory, opens: Self.opens, random: &random)

        let child = try OpenScalingChild.executable()
        let fresh: (String) -> (executable: String, arguments: [String])
        let floor: [String]
        let floorExecutable: String
        switch S.kind {
        case .mappedkv:
            fresh = { key in
                (
                    cli,
                    [
                        "get", "--root", directory, "--id", MappedKVStore<OpenScalingVariant>.storeID,
                        "--type", "int32",
                    ] + mode.toolArguments + indexFile.toolArguments + EncryptionOption.toolArguments + [key]
                )
            }
            (floorExecutable, floor) = (cli, ["--version"])
        case .lmdb:
            fresh = { key in (child, OpenScalingChild.arguments(.get, store: .lmdb, directory: directory, key: key)) }
            (floorExecutable, floor) = (child, OpenScalingChild.arguments(.noop, store: .lmdb, directory: directory))
        }
        figures[.freshProcess] = try OpenScalingMeasurement.freshProcess(
            n: n, keys: keys, runs: Self.opens, random: &random, name: S.kind.displayName, command: fresh)
        var floors: [Double] = []
        for attempt in 0...Self.opens {
            let outcome = try ChildRun.run(floorExecutable, floor)
            if attempt > 0 { floors.append(outcome.nanoseconds) }
        }
        figures[.processFloor] = Statistics.median(floors)

        let memory = try OpenScalingMeasurement.secondProcess(
            S.self, keys: keys, n: n, directory: directory, gets: Self.secondProcessGets,
            holds: mode.isMultiProcess, random: &random)
        figures[.secondAnonymous] = Double(memory.anonymous)
        figures[.secondPrivate] = Double(memory.privateTotal)
        figures[.secondPrivateClean] = Double(memory.privateClean)
        figures[.secondTotal] = Double(memory.total)
        figures[.secondAnonymousAdded] = Double(memory.anonymous - memory.anonymousBefore)
        figures[.secondPrivateAdded] = Double(memory.privateTotal - memory.privateBefore)

        let gets = try OpenScalingMeasurement.gets(
            S.self, keys: keys, shuffled: shuffled, n: n, directory: directory)
        figures[.getSequential] = gets.sequential
        figures[.getRandom] = gets.random
        if S.kind == .mappedkv && mode.mayReadThroughMappings {
            let reference = try OpenScalingMeasurement.gets(
                MappedKVStore<OpenScalingFlockVariant>.self, keys: keys, shuffled: shuffled, n: n, directory: directory)
            figures[.getSequentialFlock] = reference.sequential
            figures[.getRandomFlock] = reference.random
            let afterWrite = try OpenScalingMeasurement.gets(
                S.self, keys: keys, shuffled: shuffled, n: n, directory: directory, writesFirst: true)
            figures[.getSequentialAfterWrite] = afterWrite.sequential
            figures[.getRandomAfterWrite] = afterWrite.random
        }
        if round > 0 {
            let fresh = try Scratch.directory("\(directory)-set")
            figures[.set] = try OpenScalingMeasurement.fill(S.self, keys: keys, n: n, directory: fresh)
            try Scratch.remove(fresh)
        }
        if S.kind != .mappedkv || mode.isMultiProcess {
            figures[.firstGetAfterCompaction] = try OpenScalingMeasurement.firstGetAfterCompaction(
                S.self, keys: keys, n: n, directory: directory, random: &random)
        }
        return figures
    }

    /// One round of MMKV through its driver: `open-get` 1 + 5 times (the first untimed) for the
    /// open, the fresh process and the memory; `get-bench` in both orders; `set-bench` on a fresh
    /// store. It has no second process beside a holder and no writer, so those figures stay empty.
    private func measureMMKV(
        _ mmkv: MMKVDriver, keys: [String], n: Int, directory: String, random: inout SplitMix64
    ) throws -> [OpenScalingMetric: Double] {
        try PageCache.warm(directory)
        var runs: [MMKVOpenGet] = []
        for attempt in 0...Self.opens {
            let index = OpenScalingMeasurement.pick(n, &random)
            let run = try mmkv.openGet(
                directory: directory, key: keys[index], expected: WorkloadData.intValue(index), keys: n)
            if attempt > 0 { runs.append(run) }
        }
        var figures: [OpenScalingMetric: Double] = [:]
        figures[.openFirstGet] = Statistics.median(runs.map(\.openGetNanoseconds))
        figures[.freshProcess] = Statistics.median(runs.map(\.processNanoseconds))
        figures[.secondAnonymous] = Statistics.median(runs.map(\.anonymousKiB))
        figures[.secondTotal] = Statistics.median(runs.map(\.totalKiB))
        figures[.getSequential] = try mmkv.getNanoseconds(directory: directory, n: n, order: "seq")
        figures[.getRandom] = try mmkv.getNanoseconds(directory: directory, n: n, order: "random")
        let fresh = try Scratch.directory("\(directory)-set")
        figures[.set] = try mmkv.setNanoseconds(directory: fresh, n: n)
        try Scratch.remove(fresh)
        return figures
    }
}
