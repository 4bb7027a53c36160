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
/// - Torn pages (power loss): writes since a file's last flush reach the disk page by page, in
///   any combination. Opening must not crash, and must either load a state the store really had
///   or report damage to the handler, and never return a value its key never held.
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

    @Test(
        "power loss: unflushed pages lost in any combination never invent a value",
        arguments: [false, true], seeds)
    func tornPages(encrypted: Bool, seed: UInt64) throws {
        let recording = TemporaryDirectory("torn-rec")
        let replay = TemporaryDirectory("torn-replay")
        let key = Self.key(encrypted: encrypted)
        let workload = try RecordedWorkload.record(in: recording.path, key: key, seed: seed, operations: 160)
        let history = workload.history
        var random = SplitMix64(seed: seed &* 7919)
        var current = FileImage()
        var durable = FileImage()  // what each file held at its last flush
        var cases = 0
        var damageReports = 0
        var failures: [String] = []

        for (index, write) in workload.writes.enumerated() {
            current.apply(write)
            switch write {
            case .sync(.data): durable.data = current.data
            case .sync(.meta): durable.meta = current.meta
            case .sync(.journal): durable.journal = current.journal
            default: break
            }
            let acknowledged = workload.acknowledgedOperations(afterWrites: index + 1)
            for _ in 0..<3 {
                let crashed = FileImage(
                    data: Self.mixPages(durable.data, current.data, &random),
                    meta: Self.mixPages(durable.meta, current.meta, &random),
                    journal: random.next() % 2 == 0 ? current.journal : durable.journal)
                cases += 1
                try crashed.materialize(id: "s", in: replay.path)
                let events = EventLog()
                let store: MappedKV
                do {
                    store = try Self.open(replay.path, key: key, events: events, decision: .recover)
                } catch {
                    // Refusing is allowed only with a reason the handler heard, or an interrupted write-back.
                    if events.all.isEmpty, !"\(error)".contains("write-back") {
                        failures.append("write \(index): open failed without telling the handler: \(error)")
                    }
                    continue
                }
                let loaded = try contents(of: store)
                store.close()
                if events.all.isEmpty {
                    if !workload.states[...min(acknowledged + 1, workload.states.count - 1)].contains(loaded) {
                        failures.append("write \(index): no damage reported, yet the state is none the store had")
                    }
                } else {
                    damageReports += 1
                }
                for (name, value) in loaded where !(history[name]?.contains(value) ?? false) {
                    failures.append("write \(index): '\(name)' holds a value it never held (\(events.all))")
                }
                // A recovered store is sound: it reopens without another report.
                if !events.all.isEmpty {
                    let again = EventLog()
                    let reopened = try Self.open(replay.path, key: key, events: again, decision: .fail)
                    if try contents(of: reopened) != loaded || !again.all.isEmpty {
                        failures.append("write \(index): the recovered store does not reopen as recovered")
                    }
                    reopened.close()
                }
            }
            if failures.count > 5 { break }
        }
        #expect(failures.isEmpty, "\(failures.count) failures in \(cases) cases: \(failures.prefix(5))")
        #expect(damageReports > 0, "no torn combination was ever reported as damage: the model is not biting")
        CrashSimulationTally.shared.add("torn-page cases", cases)
    }

    /// `old` with each 4 KiB page that differs in `new` replaced by the new page or not, at random
    /// (the file takes `new`'s size).
    static func mixPages(_ old: [UInt8], _ new: [UInt8], _ random: inout SplitMix64) -> [UInt8] {
        var result = new
        let page = 4096
        var start = 0
        while start < new.count {
            let end = min(start + page, new.count)
            let oldPage = start < old.count ? Array(old[start..<min(end, old.count)]) : []
            if Array(new[start..<end]) != oldPage, random.next() % 2 == 0 {
                let kept = oldPage + [UInt8](repeating: 0, count: (end - start) - oldPage.count)
                result.replaceSubrange(start..<end, with: kept)
            }
            start = end
        }
        return result
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
        }
    }
}
