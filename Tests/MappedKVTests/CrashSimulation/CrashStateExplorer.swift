import Foundation
import MappedKVFormat
import Synchronization

@testable import MappedKV

/// Makes crash states of a recorded workload and holds each to the durability contract
/// (docs/FORMAT.md 7.3d, the DocC article Durability):
///
/// - the store opens with the default configuration, with no damage reported and nothing
///   copied aside;
/// - it holds the state after some prefix of its operations, no older than the last durability
///   point and no newer than the operation under way (so no value is ever invented);
/// - a store a crash cut back reopens as it was recovered, with nothing more to report.
///
/// A state that breaks the contract is written out as files beside a `replay.txt` that names
/// the workload, the seed and the state's number, so `MAPPEDKV_EXPLORER_REPLAY` reruns exactly it.
struct CrashStateExplorer {
    let workload: ExplorerWorkload
    let seed: UInt64
    let recording: ExplorerRecording
    let model: PowerLossModel

    init(workload: ExplorerWorkload, seed: UInt64, scratch: String) throws {
        self.workload = workload
        self.seed = seed
        recording = try workload.record(in: scratch, seed: seed)
        model = PowerLossModel(writes: recording.writes)
    }

    /// The outcome of checking states.
    struct Tally {
        var states = 0
        var crashLosses = 0
        /// States with an index file that parses beside the store's files.
        var indexFiles = 0
        var failures: [String] = []
    }

    /// Checks `count` crash states, spread over every crash point, in `directory`; state `n`
    /// is drawn from a generator seeded with the explorer's seed and `n`, so it can be replayed.
    func explore(states range: Range<Int>, in directory: String) throws -> Tally {
        var tally = Tally()
        for number in range {
            tally.states += 1
            if let failure = try check(state: number, in: directory, tally: &tally) {
                tally.failures.append(failure)
                if tally.failures.count >= 5 { break }
            }
        }
        return tally
    }

    /// The crash point and files of state `number`.
    func state(_ number: Int) -> (point: Int, image: FileImage) {
        var random = SplitMix64(seed: seed &* 0x9E37_79B9 ^ UInt64(number))
        let point = Int(random.next() % UInt64(model.crashPoints))
        return (point, model.crashState(after: point, &random))
    }

    /// Checks one state; the failure, described, or nil.
    func check(state number: Int, in directory: String, tally: inout Tally) throws -> String? {
        let (point, image) = state(number)
        let label = "\(workload) seed \(seed) state \(number) (crash after write \(point) of \(recording.writes.count))"
        try Self.clear(directory)
        try image.materialize(id: workload.storeID, in: directory)
        if try Self.reboot(directory) { tally.indexFiles += 1 }
        let allowed = recording.allowedStates(afterWrites: point).map { explorerView($0, at: recording.checkTime) }
        var errors: [String] = []
        for key in recording.candidateKeys(afterWrites: point) {
            let events = EventLog()
            let configuration = Configuration(
                cryptKey: key, clock: recording.clock,
                recoveryHandler: { event in
                    events.append(event)
                    return .default(for: event)
                })
            let opened: Opened
            do { opened = try open(directory, configuration: configuration) } catch {
                errors.append("open failed: \(error)")
                try Self.clear(directory)
                try image.materialize(id: workload.storeID, in: directory)
                _ = try Self.reboot(directory)
                continue
            }
            let (loaded, lost) = (opened.contents, opened.lost)
            var problems = opened.problems
            if !events.all.isEmpty { problems.append("damage reported: \(events.all)") }
            if workload == .cache {
                problems += CacheWorkload.violations(loaded, allowed: allowed)
            } else if !allowed.contains(loaded) {
                let nearest = allowed.min { differences(loaded, $0).count < differences(loaded, $1).count } ?? [:]
                problems.append(
                    "loaded \(loaded.count) keys, none of the \(allowed.count) allowed states "
                        + "(durable \(recording.durable(afterWrites: point)), acknowledged \(recording.acknowledged(afterWrites: point))); "
                        + "against the nearest: \(differences(loaded, nearest).prefix(300)); crash loss: \(String(describing: lost))"
                )
            }
            let names = try FileManager.default.contentsOfDirectory(atPath: directory)
            if names.contains(where: { $0.contains(".corrupt-") }) { problems.append("copies made: \(names)") }
            if problems.isEmpty, lost != nil {
                tally.crashLosses += 1
                // Recovered: it reopens as it was, with nothing more to report.
                let again = try open(directory, configuration: Configuration(cryptKey: key, clock: recording.clock))
                if again.contents != loaded || again.lost != nil || again.recovered != nil {
                    problems.append("the recovered store does not reopen as recovered")
                }
            }
            if problems.isEmpty { return nil }
            errors.append(problems.joined(separator: "; "))
            break
        }
        let saved = try Self.save(image, label: label, workload: workload, seed: seed, number: number)
        return "\(label): \(errors.joined(separator: " | ")) [files: \(saved)]"
    }

    /// What an open of a crash state found.
    struct Opened {
        var contents: [String: [UInt8]]
        var lost: CrashLossReport?
        var recovered: RecoveryReport?
        /// Invariants of the layer on top that do not hold.
        var problems: [String]
    }

    /// Opens the state in `directory` as the workload's layer does, and closes it again.
    func open(_ directory: String, configuration: Configuration) throws -> Opened {
        if workload == .cache { return try CacheWorkload.open(directory) }
        if workload == .collections {
            let opened = try CollectionsWorkload.open(directory, configuration: configuration)
            return Opened(
                contents: opened.contents, lost: opened.lost, recovered: opened.recovered, problems: opened.problems)
        }
        let store = try MappedKV(id: "s", directory: directory, configuration: configuration)
        defer { store.close() }
        return Opened(
            contents: try explorerContents(of: store, expiry: recording.checkTime != nil),
            lost: store.crashLossReport, recovered: store.recoveryReport, problems: [])
    }

    /// Writes a failing state's files out for replaying and inspection; returns the folder.
    static func save(
        _ image: FileImage, label: String, workload: ExplorerWorkload, seed: UInt64, number: Int
    ) throws -> String {
        let folder = FileManager.default.temporaryDirectory.path + "/mappedkv-crash-\(workload)-\(seed)-\(number)"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        try clear(folder)
        try image.materialize(id: workload.storeID, in: folder)
        let replay = "\(label)\nMAPPEDKV_EXPLORER_REPLAY=\(workload):\(seed):\(number) swift test --filter PowerLoss\n"
        try replay.write(toFile: folder + "/replay.txt", atomically: true, encoding: .utf8)
        return folder
    }

    /// What a power failure implies beside the files' bytes: a new boot. Every index file that
    /// survived whole enough to parse says it was written in another boot (docs/FORMAT.md 12.5),
    /// as it would after a real reboot, so that no open trusts what the lost page cache held.
    /// Returns whether there was one.
    @discardableResult
    static func reboot(_ directory: String) throws -> Bool {
        var found = false
        for name in try FileManager.default.contentsOfDirectory(atPath: directory) where name.hasSuffix(".index") {
            let path = "\(directory)/\(name)"
            guard var bytes = fileBytes(path),
                var header = try? bytes.withUnsafeBytes({ try IndexFileHeader(parsing: $0) })
            else { continue }
            header.bootID = header.bootID.map { $0 ^ 0x5A }
            let serialized = header.serialized()
            bytes.replaceSubrange(0..<serialized.count, with: serialized)
            try Data(bytes).write(to: URL(fileURLWithPath: path))
            found = true
        }
        return found
    }

    static func clear(_ directory: String) throws {
        for name in try FileManager.default.contentsOfDirectory(atPath: directory) {
            try FileManager.default.removeItem(atPath: "\(directory)/\(name)")
        }
    }

    /// A directory on a RAM-backed file system where there is one (flushes cost nothing there).
    static func scratchDirectory(_ name: String) -> TemporaryDirectory {
        TemporaryDirectory(name, base: FileManager.default.isWritableFile(atPath: "/dev/shm") ? "/dev/shm" : nil)
    }
}
