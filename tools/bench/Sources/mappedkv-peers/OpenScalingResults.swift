/// A column of the open-scaling tables.
enum OpenScalingColumn: String, CaseIterable {
    case mappedkv, lmdb, mmkv

    var displayName: String {
        switch self {
        case .mappedkv: "MappedKV"
        case .lmdb: "LMDB"
        case .mmkv: "MMKV"
        }
    }
}

/// A figure of the open-scaling bench, one table each. Samples are stored in nanoseconds, bytes
/// or kilobytes, as measured; ``scale`` turns them into the table's unit.
enum OpenScalingMetric: String, CaseIterable {
    case openFirstGet = "open_first_get_ms"
    case freshProcess = "fresh_process_ms"
    case processFloor = "process_floor_ms"
    case secondAnonymous = "second_process_rss_anon_mb"
    case secondPrivate = "second_process_private_mb"
    case secondPrivateClean = "second_process_private_clean_mb"
    case secondTotal = "second_process_vmrss_mb"
    case secondAnonymousAdded = "second_process_rss_anon_added_mb"
    case secondPrivateAdded = "second_process_private_added_mb"
    case getSequential = "get_sequential_ns"
    case getRandom = "get_random_ns"
    case getSequentialFlock = "get_sequential_flock_ns"
    case getRandomFlock = "get_random_flock_ns"
    case getSequentialAfterWrite = "get_sequential_after_write_ns"
    case getRandomAfterWrite = "get_random_after_write_ns"
    case set = "set_ns"
    case firstGetAfterCompaction = "reader_first_get_after_compaction_ms"
    case compaction = "compaction_ms"
    case compactionNoIndexFile = "compaction_no_index_file_ms"
    case compactionRatio = "compaction_index_file_ratio"
    case storeFiles = "store_files_mb"

    /// Multiplies a sample into the table's unit.
    var scale: Double {
        switch self {
        case .openFirstGet, .freshProcess, .processFloor, .firstGetAfterCompaction, .compaction,
            .compactionNoIndexFile:
            1e-6
        case .compactionRatio: 1
        case .secondAnonymous, .secondPrivate, .secondPrivateClean, .secondTotal, .secondAnonymousAdded,
            .secondPrivateAdded:
            1.0 / 1024
        case .getSequential, .getRandom, .getSequentialFlock, .getRandomFlock, .getSequentialAfterWrite,
            .getRandomAfterWrite, .set:
            1
        case .storeFiles: 1.0 / 1_048_576
        }
    }

    func format(_ value: Double) -> String {
        switch self {
        case .getSequential, .getRandom, .getSequentialFlock, .getRandomFlock, .getSequentialAfterWrite,
            .getRandomAfterWrite, .set:
            Format.grouped(value)
        case .openFirstGet, .freshProcess, .processFloor, .firstGetAfterCompaction, .compaction,
            .compactionNoIndexFile:
            value < 1 ? Format.fixed(value, 3) : value < 100 ? Format.fixed(value, 2) : Format.grouped(value)
        default: Format.fixed(value, 2)
        }
    }

    /// What the figure is, for a run that opened MappedKV in `mode`.
    func explanation(mode: OpenScalingMode) -> String {
        let holder =
            mode.isMultiProcess
            ? "after it opened the store that the bench's process holds open"
            : "after it opened the store, which no other process holds open (single-process: MappedKV's open "
                + "excludes every other)"
        return switch self {
        case .openFirstGet:
            "In the bench's own process, the store's files already in the page cache (read once, then one untimed "
                + "open and get): open the store and get one random key, timed; close, untimed. Median of 5 opens. "
                + "MMKV: the driver's own timing of its open and get in a fresh driver process (the first open there)."
        case .freshProcess:
            "Wall time of a new process that opens the store, gets one random key, prints it and exits, from before "
                + "posix_spawn to after waitpid. MappedKV: `mappedkv get "
                + (mode.toolArguments + ["--type", "int32"]).joined(separator: " ") + "` (a read-only "
                + "open); LMDB: `mappedkv-peers open-child get`; MMKV: the driver's `open-get`. Median of 5."
        case .processFloor:
            "The same executable started and ended without touching a store: `mappedkv --version` for MappedKV, "
                + "`mappedkv-peers open-child noop` for LMDB. Median of 5."
        case .secondAnonymous:
            "RssAnon of a second process, from its /proc/self/status, " + holder + " and got 1,000 random keys. "
                + "MMKV: the driver's rss_anon_kb after its open-get, with no other process holding the store."
        case .secondPrivate:
            "Private_Clean + Private_Dirty of that second process, from /proc/self/smaps_rollup: its pages no "
                + "other process maps."
        case .secondPrivateClean:
            "The Private_Clean part of second_process_private_mb: clean pages, mostly of the store's files, that "
                + "the second process maps and no other process does (page cache the kernel may drop); the rest, "
                + "Private_Dirty, is mostly its anonymous memory."
        case .secondTotal:
            "VmRSS of that second process (MMKV: the driver's rss_kb)."
        case .secondAnonymousAdded:
            "RssAnon of the second process after its open and gets minus before its open (after a warm-up on a "
                + "tiny store of the same kind): what the open and the gets added."
        case .secondPrivateAdded:
            "Private_Clean + Private_Dirty after the open and gets minus before the open."
        case .getSequential:
            "Steady-state gets on a store opened after the build's close, which has made no write since its open, "
                + "after an untimed pass: N gets in key order, per get."
        case .getRandom:
            "The same N gets in a fixed random order (a seeded permutation), per get."
        case .getSequentialFlock:
            "The reference for get_sequential_ns, in the same round: the same gets on the store opened "
                + "multi-process with the flock lock, which reads its private copy. MappedKV in the modes that may "
                + "read through the mappings."
        case .getRandomFlock:
            "The reference for get_random_ns, in the same round: the same random-order gets with the flock lock."
        case .getSequentialAfterWrite:
            "get_sequential_ns on a store opened as the others, which set key 0 to its own value first (untimed): "
                + "the gets of a process that has written."
        case .getRandomAfterWrite:
            "get_random_ns after that write."
        case .set:
            "N sets of the Int32 i under `int-<i>` in key order on a fresh store, per set (the first round's are "
                + "the build's). MMKV: the driver's set-bench."
        case .firstGetAfterCompaction:
            "In a copy of the store (for MappedKV opened and closed once, untimed, so that its index file describes "
                + "the copy's data file): the bench's process opens it and gets one key; a writer process overwrites "
                + "every tenth key and exits after MappedKV's `trim()` (a full write-back; LMDB: its commits); then "
                + "the reader's first get of an overwritten key, timed, its new value checked. Not for single-process "
                + "MappedKV, whose reader would keep the writer out."
        case .compaction:
            "In a fresh copy of the store, opened in the bench's process multi-process with the index file on (and "
                + "this run's lock, whatever --index-file says): every tenth key overwritten and every file of the "
                + "copy flushed, untimed; then MappedKV's `trim()`, a full write-back that writes the index file "
                + "under the exclusive lock, timed. \(OpenScalingCompaction.pairs) per round, each paired with "
                + "compaction_no_index_file_ms, the pairs alternating which goes first. Not for single-process "
                + "MappedKV, which writes the file at its close."
        case .compactionNoIndexFile:
            "compaction_ms with the index file off (`usesIndexFile = false`), in the same rounds."
        case .compactionRatio:
            "compaction_ms over compaction_no_index_file_ms of each pair: the median of the pairs' ratios."
        case .storeFiles:
            "The size of the store's files after the build."
        }
    }

    /// The table's heading: the metric and its unit.
    var unit: String {
        switch self {
        case .openFirstGet, .freshProcess, .processFloor, .firstGetAfterCompaction, .compaction,
            .compactionNoIndexFile:
            "ms"
        case .compactionRatio: "on / off"
        case .getSequential, .getRandom, .getSequentialFlock, .getRandomFlock, .getSequentialAfterWrite,
            .getRandomAfterWrite, .set:
            "ns per operation"
        default: "MiB"
        }
    }
}

/// One table cell's samples: a metric of a column at one N.
struct OpenScalingCell: Hashable {
    var metric: OpenScalingMetric
    var column: OpenScalingColumn
    var n: Int
}

/// The samples of an open-scaling run and the tables made from them.
struct OpenScalingResults {
    var sizes: [Int]
    var runs: Int
    var columns: [OpenScalingColumn]
    var indexFile: IndexFileOption
    var mode: OpenScalingMode
    var cli: String
    var mmkvDriver: String?
    var samples: [OpenScalingCell: [Double]]

    mutating func add(_ metric: OpenScalingMetric, _ column: OpenScalingColumn, _ n: Int, _ value: Double) {
        samples[OpenScalingCell(metric: metric, column: column, n: n), default: []].append(value)
    }

    /// The median in the table's unit, or nil where the column has no such figure.
    func median(_ metric: OpenScalingMetric, _ column: OpenScalingColumn, _ n: Int) -> Double? {
        guard let values = samples[OpenScalingCell(metric: metric, column: column, n: n)], !values.isEmpty else {
            return nil
        }
        return Statistics.median(values) * metric.scale
    }

    func markdown(machine: Machine) -> String {
        var out =
            "## Open cost and memory as the store grows: N = \(sizes.map { Format.grouped(Double($0)) }.joined(separator: ", ")), "
            + "medians of \(runs) round\(runs == 1 ? "" : "s")\n\n"
        out += "Machine: \(machine.summary); load average \(Machine.loadAverage()) at the end\n\n"
        out += "Clock: \(Clock.description) in this process; processes are timed by the wall clock.\n\n"
        out +=
            "Stores of N Int32 keys `int-<i>` holding i, built once per N. "
            + "MappedKV: \(mode.summary), index file \(indexFile.rawValue)"
            + (EncryptionOption.isOn ? ", encrypted (AES-128)" : "") + "; fresh processes run "
            + "`\(cli)`. LMDB: \(LMDBStore.libraryVersion), MDB_NOSYNC|MDB_NOMETASYNC, one write transaction per set, "
            + "gets through a reused read-only transaction (renew and reset around each get)."
        if let mmkvDriver { out += " MMKV: the driver `\(mmkvDriver)`." }
        out += "\n"
        for metric in OpenScalingMetric.allCases {
            let present = columns.filter { column in sizes.contains { median(metric, column, $0) != nil } }
            guard !present.isEmpty else { continue }
            out += "\n### \(metric.rawValue) (\(metric.unit))\n\n\(metric.explanation(mode: mode))\n\n"
            out += "| N | " + columns.map(\.displayName).joined(separator: " | ") + " |\n"
            out += "|---:|" + columns.map { _ in "---:|" }.joined() + "\n"
            for n in sizes {
                let cells = columns.map { column in median(metric, column, n).map(metric.format) ?? "-" }
                out += "| \(Format.grouped(Double(n))) | " + cells.joined(separator: " | ") + " |\n"
            }
        }
        return out
    }
}
