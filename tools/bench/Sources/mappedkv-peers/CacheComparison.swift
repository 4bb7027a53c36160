/// The cache comparison (`--cache`): every design runs its workloads once per round, rounds
/// alternate the designs (each round starts one design further along), and the report quotes the
/// median of the rounds.
struct CacheComparison {
    var designs: [CacheDesign]
    var sizes: CacheSizes
    var runs: Int
    var root: String

    func run(progress: (String) -> Void) throws -> CacheResults {
        let data = CacheData(
            keys: max(sizes.n, sizes.trimEntries),
            memoryEntries: designs.contains(.mappedkv) || designs.contains(.baseline) ? sizes.n : 0,
            largeValues: sizes.largeValues)
        var results = CacheResults(
            designs: designs, sizes: sizes, runs: runs, samples: [:], loadAtStart: Machine.loadAverage(),
            loadAtEnd: "")
        for round in 0..<runs {
            let order = (0..<designs.count).map { designs[($0 + round) % designs.count] }
            var line = "round \(round + 1)/\(runs):"
            for design in order {
                let directory = try Scratch.directory("\(root)/cache-round-\(round + 1)/\(design.rawValue)")
                let start = Clock.nanoseconds()
                let result = try design.run(data: data, sizes: sizes, directory: directory)
                try Scratch.remove(directory)
                for (workload, value) in result {
                    results.samples[design, default: [:]][workload, default: []].append(value)
                }
                line += " \(design.displayName) \(Format.duration(nanoseconds: Double(Clock.nanoseconds() - start)))"
            }
            try Scratch.remove("\(root)/cache-round-\(round + 1)")
            progress(line)
        }
        results.loadAtEnd = Machine.loadAverage()
        return results
    }
}

/// A target for MappedKVCache on one workload, in the tables of medians and of ratios to peers.
/// The targets against baselines timed in the same run are ``RatioTarget``s, in a table of their own.
enum CacheTarget {
    /// The median is at most this many nanoseconds.
    case atMost(Double)
    /// The design's median is at least this many times MappedKVCache's.
    case fasterThan(CacheDesign, Double)
    /// MappedKVCache's median is at most this many times the design's.
    case within(CacheDesign, Double)

    /// The targets per workload: absolute ones go to the table of medians, relative ones to the ratios.
    static func targets(_ workload: CacheWorkload) -> [CacheTarget] {
        switch workload {
        case .diskSet: [.fasterThan(.sqliteFiles, 10), .fasterThan(.filePerEntry, 50)]
        case .diskGet, .diskGetRandom: [.fasterThan(.sqliteFiles, 10), .fasterThan(.filePerEntry, 15)]
        case .largeSet: [.within(.plainFile, 1.3)]
        case .trim: [.atMost(100e6)]
        case .statistics: [.atMost(5e6)]
        default: []
        }
    }

    var isAbsolute: Bool {
        if case .atMost = self { return true }
        return false
    }

    var text: String {
        switch self {
        case .atMost(let limit): "≤ \(Format.duration(nanoseconds: limit))"
        case .fasterThan(let design, let factor): "≥ \(Format.oneDecimal(factor))x vs \(design.displayName)"
        case .within(let design, let factor): "≤ \(Format.oneDecimal(factor))x \(design.displayName)"
        }
    }

    /// Whether MappedKVCache meets the target, or nil when a design it needs did not run.
    func met(_ results: CacheResults, _ workload: CacheWorkload) -> Bool? {
        let ours = results.perEntry(.mappedkv, workload)
        guard ours.isFinite else { return nil }
        switch self {
        case .atMost(let limit):
            return results.median(.mappedkv, workload) <= limit
        case .fasterThan(let design, let factor):
            let theirs = results.perEntry(design, workload)
            return theirs.isFinite ? theirs / ours >= factor : nil
        case .within(let design, let factor):
            let theirs = results.perEntry(design, workload)
            return theirs.isFinite ? ours / theirs <= factor : nil
        }
    }
}

/// The samples of a cache comparison and the tables made from them.
struct CacheResults {
    var designs: [CacheDesign]
    var sizes: CacheSizes
    var runs: Int
    /// Per design and workload, one figure per round (ns per operation, per value or per call).
    var samples: [CacheDesign: [CacheWorkload: [Double]]]
    /// /proc/loadavg's 1, 5 and 15 minute figures before the first round and after the last.
    var loadAtStart: String
    var loadAtEnd: String

    /// The median, or NaN when the design did not run the workload.
    func median(_ design: CacheDesign, _ workload: CacheWorkload) -> Double {
        guard let values = samples[design]?[workload], !values.isEmpty else { return .nan }
        return Statistics.median(values)
    }

    /// The entries a per-call workload (open, trim, statistics) handled for `design`.
    func entries(_ design: CacheDesign, _ workload: CacheWorkload) -> Int {
        workload == .trim ? sizes.trimCount(design) : sizes.keyCount(design)
    }

    /// The median made comparable across designs run at different N: per-call figures of the
    /// per-call workloads are divided by the entries they handled when a design ran fewer.
    func perEntry(_ design: CacheDesign, _ workload: CacheWorkload) -> Double {
        let value = median(design, workload)
        guard workload.unit == .milliseconds else { return value }
        return value / Double(entries(design, workload)) * Double(entries(.mappedkv, workload))
    }

    /// A design's column heading, with its N when it differs.
    func heading(_ design: CacheDesign) -> String {
        let count = sizes.keyCount(design)
        guard count != sizes.n, design != .plainFile else { return design.displayName }
        return "\(design.displayName) (N = \(Format.grouped(Double(count))))"
    }

    /// The workloads at least one of the designs ran, in report order.
    var workloads: [CacheWorkload] {
        CacheWorkload.allCases.filter { workload in designs.contains { samples[$0]?[workload] != nil } }
    }

    func markdown(machine: Machine) -> String {
        let n = Format.grouped(Double(sizes.n))
        var out = "## MappedKVCache and its peers: disk and memory caches, N = \(n), medians of \(runs) rounds\n\n"
        out += "Machine: \(machine.summary)\n\n"
        out += "Clock: \(Clock.description).\n\n"
        out +=
            "Load average (1, 5, 15 min) before the first round: \(loadAtStart); after the last: \(loadAtEnd) "
            + "(anything above 0 is other processes competing for the \(machine.cores) cores).\n\n"
        for design in designs { out += "- **\(design.displayName)**: \(design.setup)\n" }
        out +=
            "\nWorkloads (100-byte values under `key-<i>`; every value read back is checked against its key; no fsync anywhere):\n\n"
        if workloads.contains(.memorySet) {
            out +=
                "- memory_set / memory_get: a memory cache with count limit N = \(n) filled with N entries (untimed), "
                + "then N sets of new keys (each evicts one) and N gets of those keys (all hits); memory_get_random: "
                + "the same gets again in a random order; memory_set_random: the same sets in another random order, "
                + "into a second cache filled the same way.\n"
        }
        if workloads.contains(.cacheMemoryGet) {
            out +=
                "- cache_memory_get / cache_memory_get_random: memory_get and memory_get_random through "
                + "`Cache<[UInt8]>.value(forKey:)` (memory count limit N, DiskCache defaults) after the sets of "
                + "memory_set through `Cache.set` (untimed, written to disk too): every get a memory hit, counted by "
                + "the memory side's statistics. cache_tier_get / cache_tier_get_random: the same gets, right after, "
                + "straight from that cache's own memory tier (`cache.memory.value(forKey:)`): the hit without the "
                + "check of other processes' changes.\n"
        }
        out +=
            "- disk_set: N sets into an empty disk cache. disk_open: close and reopen it (what the open loads). "
            + "disk_get: N gets right after that reopen, so nothing is in the process's memory. disk_get_random: "
            + "the same gets in a random order right after another reopen; disk_set_random: the sets of disk_set in "
            + "another random order into another empty cache. disk_get_floor (the baseline stores only): disk_get's "
            + "gets after another reopen, each also taking the CRC-32 of the value and noting the key and the time "
            + "in a log under a lock, the least a checked, LRU-ordered get adds. disk_set_floor (the baseline stores "
            + "only): disk_set's sets into another empty store, each of the value behind a 16-byte header under the key "
            + "with a 2-byte prefix (made untimed), after the value's CRC-32 and a clock reading, then an update of two "
            + "counters in a mapped page, the least a checked set that keeps running totals adds.\n"
            + "- The random orders are permutations drawn from fixed seeds (SplitMix64, Fisher–Yates): the same keys "
            + "in the same order for every design and round.\n"
            + "- statistics: on the reopened cache of N entries (count and bytes).\n"
            + "- large_set / large_get: \(sizes.largeValues) values of 1 MiB under new keys, then read back after a "
            + "reopen; per value. crc32_1mib: the CRC-32 of one of those values in memory, checksummed once untimed first so it is in the processor's cache, as a get's chunks are when it checks them. large_get_floor (the plain file only): the same values set into another directory, reopened and each read whole and then checksummed, the least a checked get adds to a read.\n"
            + "- trim: a separate cache of \(Format.grouped(Double(sizes.trimEntries))) entries, reopened, trimmed to half "
            + "(least recently used first).\n"
        for design in designs where design != .plainFile && sizes.keyCount(design) < sizes.n {
            out +=
                "- **\(design.displayName)** ran with N = \(Format.grouped(Double(sizes.keyCount(design)))) and a trim "
                + "of \(Format.grouped(Double(sizes.trimCount(design)))) entries; the ratios scale its per-call figures "
                + "(disk_open, trim, statistics) to MappedKVCache's entries linearly.\n"
        }

        out +=
            "\nTargets (median over median of the same rounds; the 1 MiB checked get is what DiskCache's get of a 1 MiB "
            + "value takes beyond the plain file's read, against the CRC-32 of 1 MiB alone):\n\n"
        out += RatioTarget.markdown(self)

        out +=
            "\nMedians (MappedKVCache: DiskCache; MemoryCache in the memory_* rows, `Cache<[UInt8]>` in the "
            + "cache_memory_* rows):\n\n"
        out += "| workload | " + designs.map(heading).joined(separator: " | ") + " | target | met |\n"
        out += "|---|" + designs.map { _ in "---:|" }.joined() + "---|---|\n"
        for workload in workloads {
            let targets = CacheTarget.targets(workload).filter(\.isAbsolute)
            out +=
                "| \(workload.label) | "
                + designs.map { workload.format(median($0, workload)) }.joined(separator: " | ")
                + " | \(targetCells(targets, workload)) |\n"
        }

        let peers = designs.filter { $0 != .mappedkv }
        if designs.contains(.mappedkv), !peers.isEmpty {
            out +=
                "\nRatios to MappedKVCache (median over median; above 1x MappedKVCache is faster; per-call figures per "
                + "entry):\n\n"
            out +=
                "| workload | " + peers.map { "\($0.displayName)/MappedKVCache" }.joined(separator: " | ")
                + " | target | met |\n"
            out += "|---|" + peers.map { _ in "---:|" }.joined() + "---|---|\n"
            for workload in workloads where !workload.isMemory && samples[.mappedkv]?[workload] != nil {
                let targets = CacheTarget.targets(workload).filter { !$0.isAbsolute }
                out +=
                    "| \(workload.rawValue) | "
                    + peers.map {
                        Format.ratio(perEntry($0, workload) / perEntry(.mappedkv, workload))
                    }.joined(separator: " | ") + " | \(targetCells(targets, workload)) |\n"
            }
        }

        out += "\nSpread over the \(runs) rounds (slowest / fastest):\n\n"
        out += "| workload | " + designs.map(\.displayName).joined(separator: " | ") + " |\n"
        out += "|---|" + designs.map { _ in "---:|" }.joined() + "\n"
        for workload in workloads {
            out +=
                "| \(workload.rawValue) | "
                + designs.map { design in
                    samples[design]?[workload].map { Format.fixed(Statistics.spread($0), 2) } ?? "-"
                }.joined(separator: " | ") + " |\n"
        }
        return out
    }

    /// The `target | met` cells of a row: the targets joined, and "yes" / "NO" (or "-") for each.
    private func targetCells(_ targets: [CacheTarget], _ workload: CacheWorkload) -> String {
        guard !targets.isEmpty else { return " | " }
        let verdicts = targets.map { target in target.met(self, workload).map { $0 ? "yes" : "NO" } ?? "-" }
        return targets.map(\.text).joined(separator: ", ") + " | " + verdicts.joined(separator: ", ")
    }
}
