import ArgumentParser
import Foundation
import MappedKV

/// `mappedkv stress`: a multi-process stress run with fault injection and a final verification.
struct StressCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "stress",
        abstract:
            "Run P processes of mixed operations on one multi-process store, optionally killing them, then verify it.",
        discussion: """
            The children are this binary (the hidden stress-child subcommand). They start together, \
            journal every operation to DIR/journal-<child>.log around its store call, and resume from \
            the journal when restarted after a kill. At the end the store is checked against the \
            journals. DIR's previous journals and the store ID are replaced. Prints one summary line; \
            exits 1 if there was any violation (listed on standard error). \
            The cache workload shares one disk cache in DIR instead (the store ID is not used); each \
            child opens it as a Cache with a memory tier of its own (16 entries), or with --disk-only \
            as the disk cache alone. The children put self-describing values of 10 B to 60 KiB under \
            32 random shared keys, get, remove and trim them, and journal each put and remove with \
            the CLOCK_MONOTONIC times before it and after it returned, and each get with its times \
            and the value it returned. A get that returns bytes not put for its key is a violation, \
            and so is a stale get: one that returns a value older than the last write (put or \
            remove, by any child) of its key acknowledged 50 ms or more before the get began, that \
            is, a value whose put was acknowledged before such a write began. A miss is always \
            allowed (trims and kills may lose entries), and a write in flight at a kill may or may \
            not have happened. At the end the cache, trimmed to --byte-limit, must verify, fit the \
            limit and have no orphans.
            """)

    @Option(name: .long, help: "The directory for the store, the journals and the children's standard error.")
    var root: String
    @Option(name: .long, help: "The store's ID.")
    var id = "stress"
    @Option(name: .long, help: "How many child processes to run.")
    var processes = 4
    @Option(name: .long, help: "Acknowledged operations per child.")
    var ops = 1000
    /// The key the store is encrypted with and the store's inter-process lock (flock, MMKV's, by
    /// default; shared-memory not with --workload cache). The children always share the store.
    @OptionGroup var access: StoreAccessOptions
    @Option(
        name: .long,
        help:
            "Kill a random running child with SIGKILL this often and restart it (a child killed 3 times in a row before acknowledging an operation is spared until it does)."
    )
    var killIntervalMs: Int?
    @Option(name: .long, help: "The seed of every random choice (default: random, printed on standard error).")
    var seed: UInt64?
    @Option(name: .long, help: "The children's operations: mixed, counter or cache.")
    var workload: StressWorkload = .mixed
    @Option(name: .long, help: "With --workload cache: the cache's byte limit, which trims apply.")
    var byteLimit: Int?
    @Flag(
        name: .long,
        help: "With --workload cache: the children use the disk cache alone, without a memory tier each.")
    var diskOnly = false
    @Flag(name: .long, help: .hidden)
    var verifyOnly = false

    /// How many violations are printed.
    private static let printedViolations = 20

    func validate() throws {
        guard (1...1000).contains(processes) else { throw ValidationError("--processes must be 1 to 1000") }
        guard ops > 0 else { throw ValidationError("--ops must be positive") }
        if let killIntervalMs, killIntervalMs <= 0 { throw ValidationError("--kill-interval-ms must be positive") }
        if access.lockChoice == .sharedMemory && workload == .cache {
            throw ValidationError("--lock shared-memory does not apply to --workload cache")
        }
        if diskOnly && workload != .cache { throw ValidationError("--disk-only needs --workload cache") }
        if let byteLimit {
            guard workload == .cache else { throw ValidationError("--byte-limit needs --workload cache") }
            guard byteLimit >= 0 else { throw ValidationError("--byte-limit must not be negative") }
        }
    }

    /// The ID of the store the children share: the cache's manifest for the cache workload.
    private var storeID: String { workload == .cache ? CacheStressWorker.manifestID : id }

    func run() throws {
        access.noteUnused(
            [
                (.multiProcess, "its processes always share the store"),
                (.verbose, "its processes do not log; their standard error is kept in --root"),
                (.noIndexFile, "its processes open the store with the library's defaults"),
            ], command: "stress")
        let key = try access.resolvedKey()
        let lock = access.lock
        let fileManager = FileManager.default
        try fileManager.createDirectory(atPath: root, withIntermediateDirectories: true)

        var outcome = StressSupervisor.Outcome(kills: 0, violations: [], elapsed: .zero)
        let children: [Int]
        if verifyOnly {
            children = try StressJournal.children(in: root)
            if children.isEmpty { outcome.violations.append("no journals in \(root)") }
        } else {
            try removePreviousRun()
            let seed = seed ?? UInt64.random(in: 0...UInt64.max)
            FileHandle.standardError.write(Data("stress: seed \(seed)\n".utf8))
            let storeArguments = access.keyArguments + ["--lock", lock.argument]
            let supervisor = StressSupervisor(
                settings: StressSupervisor.Settings(
                    root: root, id: storeID, processes: processes, operations: ops, seed: seed, workload: workload,
                    storeArguments: storeArguments,
                    workloadArguments: (byteLimit.map { ["--byte-limit", "\($0)"] } ?? [])
                        + (diskOnly ? ["--disk-only"] : []),
                    killInterval: killIntervalMs.map { .milliseconds($0) }))
            outcome = try supervisor.run()
            children = Array(0..<processes)
        }

        let journals = try children.map { child in
            (child: child, journal: try StressJournal.read(path: StressJournal.path(root: root, child: child)))
        }
        let histories = journals.map {
            StressHistory(child: $0.child, entries: $0.journal.entries, malformed: $0.journal.malformed)
        }
        let final =
            workload == .cache
            ? CacheStressVerifier(root: root, cryptKey: key, byteLimit: byteLimit).verify(
                histories, timeline: CacheStressTimeline(journals: journals.map { ($0.child, $0.journal.entries) }))
            : StressVerifier(root: root, id: id, cryptKey: key, processLock: lock).verify(histories)
        let violations = outcome.violations + final
        let operations = histories.reduce(0) { $0 + $1.acknowledged }
        let seconds = Double(outcome.elapsed.components.seconds) + Double(outcome.elapsed.components.attoseconds) / 1e18
        let rate = seconds > 0 ? Int((Double(operations) / seconds).rounded()) : 0
        print(
            "stress: processes \(children.count), operations \(operations), ops/s \(rate), kills \(outcome.kills), kills-in-write-back \(outcome.killsInWriteBack), violations \(violations.count)"
        )
        guard violations.isEmpty else {
            for violation in violations.prefix(Self.printedViolations) { printError("violation: " + violation) }
            if violations.count > Self.printedViolations {
                printError("... and \(violations.count - Self.printedViolations) more violations")
            }
            throw ExitCode.failure
        }
    }

    /// Removes the journals, standard error files and store (or cache) files of an earlier run in `root`.
    private func removePreviousRun() throws {
        let fileManager = FileManager.default
        let location = try reportingErrors { try StoreLocation(id: storeID, directory: root) }
        var paths = [location.dataPath, location.metaPath, location.journalPath, location.lockPath]
        if workload == .cache { paths += CacheStressWorker.cacheEntries.map { root + "/" + $0 } }
        for name in try fileManager.contentsOfDirectory(atPath: root)
        where (name.hasPrefix("journal-") && name.hasSuffix(".log"))
            || (name.hasPrefix("stress-") && name.hasSuffix(".stderr"))
        {
            paths.append(root + "/" + name)
        }
        for path in paths where fileManager.fileExists(atPath: path) { try fileManager.removeItem(atPath: path) }
    }
}
