/// The peer comparison: every store runs every workload once per round, rounds alternate the
/// stores (each round starts one store further along, so no store always runs first or last),
/// and the report quotes the median of the rounds.
struct PeerComparison {
    var stores: [StoreKind]
    var n: Int
    var runs: Int
    /// UserDefaults' set costs O(N), so it runs at most this many keys.
    var userDefaultsLimit: Int
    var root: String

    /// The keys a store runs with.
    func keyCount(_ kind: StoreKind) -> Int { kind == .userdefaults ? min(n, userDefaultsLimit) : n }

    func run(progress: (String) -> Void) throws -> PeerResults {
        let data = WorkloadData(n: n)
        var results = PeerResults(stores: stores, n: n, runs: runs, keyCounts: [:], samples: [:], diskBytes: [:])
        for kind in stores { results.keyCounts[kind] = keyCount(kind) }
        for round in 0..<runs {
            let order = (0..<stores.count).map { stores[($0 + round) % stores.count] }
            var line = "round \(round + 1)/\(runs):"
            for kind in order {
                let directory = try Scratch.directory("\(root)/round-\(round + 1)/\(kind.rawValue)")
                let start = Clock.nanoseconds()
                let result = try kind.run(data: data, n: keyCount(kind), directory: directory)
                try Scratch.remove(directory)
                for (workload, value) in result.nanoseconds {
                    results.samples[kind, default: [:]][workload, default: []].append(value)
                }
                results.diskBytes[kind, default: []].append(Double(result.diskBytes))
                line += " \(kind.displayName) \(Format.duration(nanoseconds: Double(Clock.nanoseconds() - start)))"
            }
            try Scratch.remove("\(root)/round-\(round + 1)")
            progress(line)
        }
        return results
    }
}

/// The samples of a peer comparison and the tables made from them.
struct PeerResults {
    var stores: [StoreKind]
    var n: Int
    var runs: Int
    var keyCounts: [StoreKind: Int]
    /// Per store and workload, one figure per round (ns per operation; ns per reopen for reopen_load).
    var samples: [StoreKind: [Workload: [Double]]]
    var diskBytes: [StoreKind: [Double]]

    func median(_ kind: StoreKind, _ workload: Workload) -> Double {
        Statistics.median(samples[kind]?[workload] ?? [.nan])
    }

    /// The median per operation; for reopen_load, per key loaded (so stores run at different N compare).
    func perOperation(_ kind: StoreKind, _ workload: Workload) -> Double {
        let value = median(kind, workload)
        return workload.isPerOperation ? value : value / Double(keyCounts[kind] ?? n)
    }

    /// A store's column heading, with its N when it differs.
    func heading(_ kind: StoreKind) -> String {
        let count = keyCounts[kind] ?? n
        return count == n ? kind.displayName : "\(kind.displayName) (N = \(Format.grouped(Double(count))))"
    }

    func markdown(machine: Machine) -> String {
        var out = "## MappedKV and its peers: N = \(Format.grouped(Double(n))), medians of \(runs) rounds\n\n"
        out += "Machine: \(machine.summary)\n\n"
        for kind in stores { out += "- **\(kind.displayName)**: \(kind.setup)\n" }
        if let capped = stores.first(where: { (keyCounts[$0] ?? n) < n }) {
            out +=
                "- **\(capped.displayName)** ran with N = \(Format.grouped(Double(keyCounts[capped] ?? n))), not "
                + "\(Format.grouped(Double(n))): every set and remove searches a list of keys linearly "
                + "(CFArrayContainsValue under _CFApplicationPreferencesSet/Remove, over 90% of its time in perf), so they slow down "
                + "in proportion to N and its figures are lower than they would be at N = \(Format.grouped(Double(n))).\n"
        }
        out += "\nNanoseconds per operation (reopen_load: per reopen and per key):\n\n"
        out += "| workload | " + stores.map(heading).joined(separator: " | ") + " |\n"
        out += "|---|" + stores.map { _ in "---:|" }.joined() + "\n"
        for workload in Workload.allCases where workload.isPerOperation {
            out +=
                "| \(workload.rawValue) (ns/op) | "
                + stores.map { Format.grouped(median($0, workload)) }.joined(separator: " | ") + " |\n"
        }
        out +=
            "| reopen_load (ms per reopen) | "
            + stores.map { Format.fixed(median($0, .reopenLoad) / 1e6, 2) }.joined(separator: " | ") + " |\n"
        out +=
            "| reopen_load (ns per key) | "
            + stores.map { Format.grouped(perOperation($0, .reopenLoad)) }.joined(separator: " | ") + " |\n"
        out +=
            "| files of the reopen_load store (KiB) | "
            + stores.map { Format.grouped(Statistics.median(diskBytes[$0] ?? [.nan]) / 1024) }.joined(separator: " | ")
            + " |\n"

        if stores.contains(.mappedkv), stores.count > 1 {
            let peers = stores.filter { $0 != .mappedkv }
            out += "\nRatios to MappedKV (median over median; above 1x MappedKV is faster; reopen_load per key):\n\n"
            out += "| workload | " + peers.map { "\($0.displayName)/MappedKV" }.joined(separator: " | ") + " |\n"
            out += "|---|" + peers.map { _ in "---:|" }.joined() + "\n"
            for workload in Workload.allCases {
                out +=
                    "| \(workload.rawValue) | "
                    + peers.map {
                        Format.ratio(perOperation($0, workload) / perOperation(.mappedkv, workload))
                    }.joined(separator: " | ") + " |\n"
            }
        }

        out += "\nSpread over the \(runs) rounds (slowest / fastest):\n\n"
        out += "| workload | " + stores.map(\.displayName).joined(separator: " | ") + " |\n"
        out += "|---|" + stores.map { _ in "---:|" }.joined() + "\n"
        for workload in Workload.allCases {
            out +=
                "| \(workload.rawValue) | "
                + stores.map {
                    Format.fixed(Statistics.spread(samples[$0]?[workload] ?? []), 2)
                }.joined(separator: " | ") + " |\n"
        }
        return out
    }
}
