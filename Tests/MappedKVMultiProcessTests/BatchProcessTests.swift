import Foundation
import MappedKV
import MappedKVProcessTestSupport
import Testing

/// Write batches across real processes: `mappedkv apply --multi-process` writes runs of 100 sets
/// as one `MappedKV.batch` each (every key of a run gets the same value), and this process, sharing
/// the store, must only ever see whole runs: while the writer runs, and after it is killed with
/// SIGKILL at whatever point it has reached, eight times at different moments.
@Suite("Write batches across processes", .serialized)
struct BatchProcessTests {
    static let keys = (0..<100).map { "k\($0)" }

    /// A script of `rounds` batches: a `set-string` line per key, all of one value, then an
    /// `incr-int64`, which is not batchable and so ends the batch. Values are ~400 bytes, so a
    /// batch is 40 KB (the writer spends much of its time writing it) and the file grows and compacts.
    static func script(rounds: Int) -> String {
        let padding = String(repeating: "x", count: 400)
        var lines: [String] = []
        for round in 1...rounds {
            for key in keys { lines.append("set-string \(key) \(round):\(padding)") }
            lines.append("incr-int64 batches 1")
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// The batch number all keys hold in one snapshot, 0 if none is set yet; records an issue (and
    /// returns nil) if the snapshot mixes batches.
    static func wholeBatch(in store: MappedKV) throws -> Int? {
        let values = Dictionary(uniqueKeysWithValues: try store.entries().map { ($0.key, $0.payload) })
        let present = keys.compactMap { values[$0] }
        if present.isEmpty { return 0 }
        // A string payload is varint(length) (continuation bytes have the top bit set), then the text.
        let numbers = Set(
            present.map { payload in
                let text = payload.drop { $0 & 0x80 != 0 }.dropFirst()
                return String(decoding: text, as: UTF8.self).prefix { $0 != ":" }
            })
        guard present.count == keys.count, numbers.count == 1, let number = numbers.first.flatMap({ Int($0) })
        else {
            Issue.record("a torn batch: \(present.count) of \(keys.count) keys, values \(numbers.sorted())")
            return nil
        }
        return number
    }

    @Test("a reader sees only whole batches, also after the writer is killed in the middle", arguments: [false, true])
    func killedBatchWriter(encrypted: Bool) throws {
        try TemporaryDirectory.with { tmp in
            let root = tmp.path("root")
            let keyArguments = encrypted ? ["--crypt-key", "batch-key"] : []
            let arguments = ["apply", "--create"] + CLI.store(root, "s") + ["--multi-process"] + keyArguments
            try CLI.succeed(
                ["set", "--create"] + CLI.store(root, "s") + ["--multi-process"] + keyArguments + ["a", "b"])
            let store = try MappedKV(
                id: "s", directory: root,
                configuration: Configuration(
                    isMultiProcess: true, cryptKey: encrypted ? CryptKey(Array("batch-key".utf8)) : nil))
            defer { store.close() }
            let input = try tmp.write(Self.script(rounds: 400), to: "script.txt")
            var snapshots = 0
            var kills = 0
            var last = 0
            // The kill comes this long after the reader first sees a batch of the new run: fault
            // injection at spread-out moments, not synchronisation.
            for delay in [0, 1, 2, 3, 5, 8, 13, 21] {
                let writer = Process()
                writer.executableURL = try CLI.binary.get()
                writer.arguments = arguments
                writer.standardInput = try FileHandle(forReadingFrom: URL(fileURLWithPath: input))
                writer.standardOutput = FileHandle.nullDevice
                writer.standardError = FileHandle.nullDevice
                try writer.run()
                var killAt: ContinuousClock.Instant?
                while writer.isRunning {
                    guard let number = try Self.wholeBatch(in: store) else { break }
                    snapshots += 1
                    if killAt == nil && number != last { killAt = .now + .milliseconds(delay) }
                    if let killAt, ContinuousClock.now >= killAt { break }
                }
                kill(writer.processIdentifier, SIGKILL)
                writer.waitUntilExit()
                if writer.terminationReason == .uncaughtSignal { kills += 1 }
                last = try #require(try Self.wholeBatch(in: store))
                // A process that opens the store afresh finds it sound.
                try CLI.succeed(["verify"] + CLI.store(root, "s") + keyArguments)
            }
            #expect(kills > 0, "the writer always finished before it was killed")
            print("batches across processes: \(snapshots) snapshots, \(kills) kills, all whole")
        }
    }

    @Test("a batched read sees only whole batches while another process writes them")
    func batchedReadDuringBatches() throws {
        try TemporaryDirectory.with { tmp in
            let root = tmp.path("root")
            try CLI.succeed(["set", "--create"] + CLI.store(root, "s") + ["--multi-process", "a", "b"])
            let store = try MappedKV(
                id: "s", directory: root, configuration: Configuration(isMultiProcess: true))
            defer { store.close() }
            let input = try tmp.write(Self.script(rounds: 150), to: "script.txt")
            let writer = Process()
            writer.executableURL = try CLI.binary.get()
            writer.arguments = ["apply", "--create"] + CLI.store(root, "s") + ["--multi-process"]
            writer.standardInput = try FileHandle(forReadingFrom: URL(fileURLWithPath: input))
            writer.standardOutput = FileHandle.nullDevice
            writer.standardError = FileHandle.nullDevice
            try writer.run()
            var reads = 0
            var rounds = Set<Substring>()
            func roundsRead() throws -> Set<Substring> {
                let values = try store.values(forKeys: Self.keys, as: String.self)
                return Set(values.map { $0?.prefix { $0 != ":" } ?? "absent" })
            }
            repeat {
                let read = try roundsRead()
                reads += 1
                guard read.count == 1, let round = read.first else {
                    Issue.record("a batched read mixed batches: \(read.sorted())")
                    break
                }
                rounds.insert(round)
            } while writer.isRunning
            writer.waitUntilExit()
            #expect(writer.terminationStatus == 0)
            #expect(try roundsRead() == ["150"])
            print("batched reads across processes: \(reads) reads, \(rounds.count) distinct batches seen, all whole")
        }
    }
}
