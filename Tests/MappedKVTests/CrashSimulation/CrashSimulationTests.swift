import Foundation
import Synchronization
import Testing

@testable import MappedKV

/// Crash simulation: replays the writes a store made during a seeded random workload and opens
/// the files a crash at every point would leave.
///
/// - Process kill: the page cache keeps every completed store, so the files are a prefix of the
///   writes, the last one possibly cut (every byte split of a multi-byte meta store). Opening
///   must yield exactly the state after some prefix of the operations that includes every
///   acknowledged one, with no damage reported.
/// Power loss, where writes since a file's last flush reach the disk sector by sector, is
/// ``PowerLossTests``' (the crash-state explorer's) and held to the whole durability contract.
@Suite("Crash simulation")
struct CrashSimulationTests {
    static let seeds: [UInt64] = [11, 29]

    static func key(encrypted: Bool) -> CryptKey? { encrypted ? CryptKey(Array("crash-simulation".utf8)) : nil }

    /// Opens the store in `directory` with a handler that logs events and answers `decision`.
    static func open(
        _ directory: String, key: CryptKey?, events: EventLog, decision: RecoveryDecision
    ) throws -> MappedKV {
        try MappedKV(
            id: "s", directory: directory,
            configuration: Configuration(
                cryptKey: key,
                recoveryHandler: {
                    events.append($0)
                    return decision
                }))
    }

    @Test(
        "process kill at every write and every torn meta store loses no acknowledged operation",
        arguments: [false, true], seeds)
    func processKill(encrypted: Bool, seed: UInt64) throws {
        let recording = TemporaryDirectory("kill-rec")
        let replay = TemporaryDirectory("kill-replay")
        let key = Self.key(encrypted: encrypted)
        let workload = try RecordedWorkload.record(in: recording.path, key: key, seed: seed, operations: 160)
        var image = FileImage()
        var cutPoints = 0
        var failures: [String] = []

        func check(_ cut: FileImage, writesDone: Int, label: String) throws {
            cutPoints += 1
            try cut.materialize(id: "s", in: replay.path)
            let acknowledged = workload.acknowledgedOperations(afterWrites: writesDone)
            let events = EventLog()
            let store: MappedKV
            do {
                store = try Self.open(replay.path, key: key, events: events, decision: .fail)
            } catch {
                failures.append("\(label): open failed: \(error)")
                return
            }
            defer { store.close() }
            if !events.all.isEmpty { failures.append("\(label): damage reported: \(events.all)") }
            let loaded = try contents(of: store)
            // Operation `acknowledged` may have been in flight: its effect may or may not be there.
            let candidates = workload.states[acknowledged...].prefix(2)
            if !candidates.contains(loaded) {
                failures.append(
                    "\(label): loaded \(loaded.count) keys, matching neither the state after \(acknowledged) operations nor the next"
                )
            }
        }

        try check(image, writesDone: 0, label: "before any write")
        for (index, write) in workload.writes.enumerated() {
            for split in FileImage.tornSplits(of: write) {
                var torn = image
                torn.apply(write, byteCount: split)
                try check(torn, writesDone: index, label: "write \(index) (\(write.kind)) cut after \(split) bytes")
            }
            image.apply(write)
            try check(image, writesDone: index + 1, label: "after write \(index) (\(write.kind))")
            if failures.count > 5 { break }
        }
        #expect(failures.isEmpty, "\(failures.count) failures of \(cutPoints) cut points: \(failures.prefix(5))")
        #expect(cutPoints > workload.writes.count, "too few cut points: \(cutPoints)")
        CrashSimulationTally.shared.add("process-kill cut points", cutPoints)
    }
}

/// Counts the cases the crash-simulation tests ran; `MAPPEDKV_TALLY=1 swift test` prints them.
final class CrashSimulationTally: Sendable {
    static let shared = CrashSimulationTally()
    private let totals = Mutex<[String: Int]>([:])
    func add(_ model: String, _ count: Int) {
        let sum = totals.withLock {
            $0[model, default: 0] += count
            return $0[model, default: 0]
        }
        if ProcessInfo.processInfo.environment["MAPPEDKV_TALLY"] != nil { print("tally: \(model) so far: \(sum)") }
    }
}

extension FileWrite {
    /// A short name for messages.
    var kind: String {
        switch self {
        case .data(let offset, let bytes): "data[\(offset)..<\(offset + bytes.count)]"
        case .meta(let offset, let bytes): "meta[\(offset)..<\(offset + bytes.count)]"
        case .dataSize(let size): "data size \(size)"
        case .metaSize(let size): "meta size \(size)"
        case .journal(let bytes): "journal \(bytes.count) bytes"
        case .journalRemoved: "journal removed"
        case .sync(let file): "sync \(file)"
        case .file(let name, let offset, let bytes): "\(name)[\(offset)..<\(offset + bytes.count)]"
        case .renamed(let source, let target): "rename \(source) to \(target)"
        case .removed(let name): "remove \(name)"
        case .syncFile(let name): "sync \(name)"
        case .syncFolder(let name): "sync folder \(name)"
        }
    }
}
