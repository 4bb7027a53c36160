import ArgumentParser
import Foundation

/// `mappedkv-peers`: MappedKV against SQLite, LMDB and UserDefaults on `mappedkv bench`'s
/// workloads, (`--scaling`) MappedKV alone at growing N, (`--open-scaling`) the cost of opening a
/// store and a process's memory as the store grows, beside LMDB and MMKV, or (`--cache`)
/// MappedKVCache against other disk cache designs.
@main
struct PeersCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "mappedkv-peers",
        abstract:
            "Time MappedKV against SQLite, LMDB and UserDefaults, MappedKV's scaling with N, its open cost with N, or MappedKVCache's caches.",
        // The only subcommand is hidden (the open-scaling bench's children): the usage line says
        // so rather than ArgumentParser's "<options> <subcommand>".
        usage: "mappedkv-peers [<options>]",
        discussion: """
            Runs set_int32, set_string, get_int32, get_string, remove and reopen_load (the workloads of \
            `mappedkv bench`) on every store, --runs rounds alternating the stores, and prints Markdown tables \
            of the medians and of the ratios to MappedKV. With --scaling, runs MappedKV alone at each N of \
            --scaling-n. With --open-scaling, times at each N of --sizes the open and first get in a running \
            process and in a fresh one, a second process's memory, steady-state gets and sets and a reader's first \
            get after another process compacted the store, for MappedKV (multi-process with --lock, or \
            --single-process), LMDB and, through --mmkv-driver, MMKV. With --cache, compares MappedKVCache's \
            DiskCache with a SQLite + files cache (YYKVStorage's design), a file-per-entry cache (PINDiskCache's \
            design) and, for 1 MiB values, plain files, times its MemoryCache at its count limit and its Cache's \
            memory hits, and prints its targets as ratios against baselines timed in the same rounds (a dictionary \
            behind a mutex, a multi-process MappedKV store, the CRC-32 alone). Build in release (tools/bench.sh does).
            """,
        subcommands: [OpenScalingChild.self])

    @Option(help: "Keys per workload.")
    var n = 100_000
    @Option(name: .customLong("runs"), help: "Rounds; the tables quote the median. Default: 5; 3 with --open-scaling.")
    var runsOption: Int?
    /// --open-scaling builds stores of up to 10^7 keys, so it runs fewer rounds unless told.
    var runs: Int { runsOption ?? (openScaling ? 3 : 5) }
    @Option(
        help:
            "Directory for the stores: each gets a fresh subdirectory, removed after its round. Default: a new directory in /tmp, removed at the end."
    )
    var root: String?
    @Option(help: "Comma-separated stores: mappedkv,sqlite,lmdb,userdefaults.", transform: Self.parseStores)
    var stores: [StoreKind] = StoreKind.allCases
    @Option(help: "Run UserDefaults with at most this many keys (its set slows down in proportion to N).")
    var userdefaultsMaxN = 10_000
    @Option(help: "Write the chart to this SVG file.")
    var svg: String?
    @Flag(help: "Measure MappedKV's scaling instead of comparing stores.")
    var scaling = false
    @Option(help: "With --scaling: the comma-separated N values.", transform: Self.parseSizes)
    var scalingN: [Int] = [10_000, 100_000, 1_000_000]
    @Flag(help: "Measure the open cost and a process's memory as the store grows (MappedKV, LMDB, MMKV).")
    var openScaling = false
    @Option(help: "With --open-scaling: the comma-separated N values.", transform: Self.parseSizes)
    var sizes: [Int] = [10_000, 100_000, 1_000_000, 10_000_000]
    @Option(
        help:
            "With --open-scaling: an MMKV driver (fill, open-get, get-bench, set-bench subcommands) for an MMKV column."
    )
    var mmkvDriver: String?
    @Option(
        help:
            "With --open-scaling: open MappedKV's stores with a persisted index file (on, the library's default) or without (off)."
    )
    var indexFile: IndexFileOption = .on
    @Option(
        help: ArgumentHelp(
            "With --open-scaling: the lock of MappedKV's multi-process opens (the bench's, its children's and the mappedkv tool's): flock or shared-memory. Default: flock.",
            valueName: "lock"))
    var lock: LockOption?
    @Flag(
        help:
            "With --open-scaling: open MappedKV single-process instead (the second process then reads a store no other process holds, and the reader after a compaction is left out)."
    )
    var singleProcess = false
    @Flag(help: "With --open-scaling: encrypt MappedKV's stores (AES-128 under a fixed key).")
    var encrypted = false
    @Option(
        help:
            "With --open-scaling: the mappedkv tool for MappedKV's fresh processes. Default: the one beside this executable (build it with --product mappedkv)."
    )
    var mappedkvCli: String?
    @Flag(help: "Compare disk and memory caches (MappedKVCache and its peers) instead of stores.")
    var cache = false
    @Option(
        help:
            "With --cache: comma-separated designs: mappedkvcache,sqlite-files,file-per-entry,plain-file,baseline,mappedkv-flock.",
        transform: Self.parseDesigns)
    var cacheDesigns: [CacheDesign] = CacheDesign.allCases
    @Option(help: "With --cache: run the file-per-entry design with at most this many keys.")
    var filePerEntryMaxN = 100_000
    @Option(help: "With --cache: the entries of the cache trimmed to half.")
    var trimN = 50_000
    @Option(help: "With --cache: the 1 MiB values of the large-value workload.")
    var largeCount = 50
    @Flag(help: "Compare MappedKVCollections with the SQLite design it replaces instead of stores.")
    var collections = false
    @Option(help: "With --collections: the posts in the bucket.")
    var collectionsN = 1_000_000
    @Option(help: "With --collections: comma-separated designs: mappedkv,sqlite.")
    var collectionsDesigns = "mappedkv,sqlite"
    @Flag(help: "Time only the delivery of another process's puts by Bucket.changes() (part of --collections).")
    var collectionsChanges = false
    @Option(help: "With --collections or --collections-changes: the puts whose delivery is timed.")
    var changesPuts = 200
    @Option(help: .hidden)
    var changesWriter: String?
    @Option(
        help:
            "wall: time by the wall clock; cpu: the process's CPU time, which leaves out time other processes hold the cores (for a shared machine)."
    )
    var clock = "wall"
    @Option(help: .hidden)
    var rssProbe: String?
    @Option(help: .hidden)
    var rssProbeId: String?

    static func parseStores(_ text: String) throws -> [StoreKind] {
        let kinds = try text.split(separator: ",").map { name in
            guard let kind = StoreKind(rawValue: name.lowercased().trimmingCharacters(in: .whitespaces)) else {
                throw ValidationError(
                    "unknown store \(name); known: \(StoreKind.allCases.map(\.rawValue).joined(separator: ","))")
            }
            return kind
        }
        guard !kinds.isEmpty else { throw ValidationError("--stores needs at least one store") }
        return kinds
    }

    static func parseDesigns(_ text: String) throws -> [CacheDesign] {
        let designs = try text.split(separator: ",").map { name in
            guard let design = CacheDesign(rawValue: name.lowercased().trimmingCharacters(in: .whitespaces)) else {
                throw ValidationError(
                    "unknown design \(name); known: \(CacheDesign.allCases.map(\.rawValue).joined(separator: ","))")
            }
            return design
        }
        guard !designs.isEmpty else { throw ValidationError("--cache-designs needs at least one design") }
        return designs
    }

    static func parseSizes(_ text: String) throws -> [Int] {
        let sizes = try text.split(separator: ",").map { part in
            guard let size = Int(part.trimmingCharacters(in: .whitespaces)), size > 0 else {
                throw ValidationError("bad N \(part)")
            }
            return size
        }
        guard !sizes.isEmpty else { throw ValidationError("--scaling-n needs at least one N") }
        return sizes
    }

    func validate() throws {
        guard n > 0 else { throw ValidationError("--n must be positive") }
        guard runs > 0 else { throw ValidationError("--runs must be positive") }
        guard userdefaultsMaxN > 0 else { throw ValidationError("--userdefaults-max-n must be positive") }
        guard filePerEntryMaxN > 0 else { throw ValidationError("--file-per-entry-max-n must be positive") }
        guard trimN >= 2 else { throw ValidationError("--trim-n must be at least 2") }
        guard changesPuts > 0 else { throw ValidationError("--changes-puts must be positive") }
        guard largeCount > 0 else { throw ValidationError("--large-count must be positive") }
        guard !(cache && scaling) else { throw ValidationError("--cache and --scaling are separate runs") }
        guard !openScaling || !(cache || scaling || collections || collectionsChanges) else {
            throw ValidationError("--open-scaling is a run of its own")
        }
        try indexFile.validate()
        guard !(singleProcess && lock != nil) else {
            throw ValidationError("--lock chooses a multi-process store's lock: leave it out with --single-process")
        }
        guard openScaling || (lock == nil && !singleProcess && !encrypted) else {
            throw ValidationError("--lock, --single-process and --encrypted are options of --open-scaling")
        }
        guard ["wall", "cpu"].contains(clock) else { throw ValidationError("--clock must be wall or cpu") }
    }

    func run() throws {
        do {
            if let rssProbe {
                try MemoryProbe.runChild(directory: rssProbe, id: rssProbeId ?? Scaling.storeID)
                return
            }
            if let changesWriter {
                try CollectionsChangesDelivery.runWriter(directory: changesWriter, puts: changesPuts)
                return
            }
            setenv(Clock.environmentVariable, clock, 1)  // before the first reading fixes Clock.id
            setenv(IndexFileOption.environmentVariable, indexFile.rawValue, 1)  // likewise, children inherit it
            setenv(EncryptionOption.environmentVariable, encrypted ? "1" : "0", 1)  // likewise
            setenv(OpenScalingMode.environmentVariable, openScalingMode.rawValue, 1)  // likewise
            try measure()
        } catch {
            FileHandle.standardError.write(Data("mappedkv-peers: \(error)\n".utf8))
            throw ExitCode.failure
        }
    }

    private func measure() throws {
        let machine = Machine.current()
        let temporary = root == nil
        // A given root is only created if missing, never emptied: the stores live in subdirectories of it.
        let directory =
            try root.map { try Scratch.existingDirectory($0) }
            ?? Scratch.directory(
                URL(fileURLWithPath: NSTemporaryDirectory())
                    .appendingPathComponent("mappedkv-peers-\(ProcessInfo.processInfo.processIdentifier)").path)
        defer { if temporary { try? Scratch.remove(directory) } }
        let progress: (String) -> Void = { FileHandle.standardError.write(Data("\($0)\n".utf8)) }

        if collections || collectionsChanges {
            if collections {
                var comparison = CollectionsComparison(n: collectionsN, runs: runs, root: directory)
                comparison.designs = collectionsDesigns.split(separator: ",").map(String.init)
                let results = try comparison.run(progress: progress)
                print(CollectionsComparison.markdown(results, n: collectionsN, runs: runs))
            }
            let delivery = try CollectionsChangesDelivery(puts: changesPuts, root: directory).run(progress: progress)
            print(CollectionsChangesDelivery.markdown(delivery, puts: changesPuts))
        } else if cache {
            let sizes = CacheSizes(
                n: n, filePerEntryLimit: filePerEntryMaxN, trimEntries: trimN, largeValues: largeCount)
            let results = try CacheComparison(designs: cacheDesigns, sizes: sizes, runs: runs, root: directory)
                .run(progress: progress)
            print(results.markdown(machine: machine))
            if let svg { try CacheChart.render(results, machine: machine).write(to: svg) }
        } else if openScaling {
            let kinds = OpenScalingKind.allCases.filter { kind in stores.contains { $0.rawValue == kind.rawValue } }
            guard !kinds.isEmpty || mmkvDriver != nil else {
                throw BenchError("--open-scaling runs mappedkv and lmdb from --stores, and --mmkv-driver")
            }
            let driver = mmkvDriver.map(MMKVDriver.init(path:))
            try driver?.validate()
            let openScaling = OpenScaling(
                sizes: sizes, runs: runs, root: directory, kinds: kinds, mmkv: driver, cli: try mappedkvTool(),
                indexFile: indexFile, mode: openScalingMode)
            print(try openScaling.run(progress: progress).markdown(machine: machine))
        } else if scaling {
            let results = try Scaling(sizes: scalingN, runs: runs, root: directory).run(progress: progress)
            print(results.markdown(machine: machine))
            if let svg { try ScalingChart.render(results, machine: machine).write(to: svg) }
        } else {
            let comparison = PeerComparison(
                stores: stores, n: n, runs: runs, userDefaultsLimit: userdefaultsMaxN, root: directory)
            let results = try comparison.run(progress: progress)
            print(results.markdown(machine: machine))
            if let svg { try PeerChart.render(results, machine: machine).write(to: svg) }
        }
        if let svg { progress("chart written to \(svg)") }
    }

    /// How --open-scaling opens MappedKV, from --lock and --single-process.
    private var openScalingMode: OpenScalingMode {
        OpenScalingMode(lock: lock ?? .flock, singleProcess: singleProcess)
    }

    /// The `mappedkv` tool `--mappedkv-cli` names, or the one built beside this executable.
    private func mappedkvTool() throws -> String {
        let path =
            try mappedkvCli
            ?? URL(fileURLWithPath: OpenScalingChild.executable()).deletingLastPathComponent()
            .appendingPathComponent("mappedkv").path
        guard FileManager.default.isExecutableFile(atPath: path) else {
            throw BenchError(
                "no mappedkv tool at \(path): build it into this executable's directory with "
                    + "`swift build -c release --package-path tools/bench --scratch-path tools/bench/.build --product mappedkv`, "
                    + "or pass --mappedkv-cli")
        }
        return path
    }
}
