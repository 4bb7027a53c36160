import Foundation
import Glibc
import Testing

@testable import MappedKV

// Reading through the mappings (docs/FORMAT.md 12.5) while real `mappedkv` processes append,
// compact, shrink and are killed: the reader stays in that mode, keeps no private copy of the
// region, and never reads a torn, stale or missing value.

@Suite("Reads through the mappings across processes", .serialized, .timeLimit(.minutes(5)))
struct MappedReadsProcessTests {
    static func arguments(_ root: String) -> [String] {
        CLI.store(root, "s") + ["--multi-process", "--lock", "shared-memory"]
    }

    static let configuration = Configuration(isMultiProcess: true, processLock: .sharedMemory)

    static func readsThroughMappings(_ store: MappedKV) -> Bool {
        store.shared.core.withLock { $0.readsThroughMappings && $0.mirror.isEmpty }
    }

    /// `apply` lines that set keys `k<i>` for `keys` to `v<round>-<i>`.
    static func sets(_ keys: some Sequence<Int>, round: Int) -> String {
        keys.map { "set-string k\($0) v\(round)-\($0)\n" }.joined()
    }

    @Test("a reader sees every append, removal, compaction and clear of other processes, and stays mapped")
    func followsOtherProcesses() throws {
        try TemporaryDirectory.with { tmp in
            let root = tmp.path("root")
            var model: [String: String] = [:]
            for i in 0..<2_000 { model["k\(i)"] = "v0-\(i)" }
            try CLI.succeed(["apply", "--create"] + Self.arguments(root), stdin: Self.sets(0..<2_000, round: 0))
            let store = try MappedKV(id: "s", directory: root, configuration: Self.configuration)
            defer { store.close() }
            #expect(Self.readsThroughMappings(store))
            #expect(try store.string(forKey: "k7") == "v0-7")
            let fileSize = try FileManager.default.attributesOfItem(atPath: root + "/s")[.size] as? Int
            for round in 1...6 {
                var lines = Self.sets(stride(from: round, to: 2_000, by: 3), round: round)
                for i in stride(from: round, to: 2_000, by: 3) { model["k\(i)"] = "v\(round)-\(i)" }
                for i in stride(from: round * 7, to: 2_000, by: 97) {
                    lines += "remove k\(i)\n"
                    model["k\(i)"] = nil
                }
                if round % 2 == 0 { lines += "trim\n" }
                try CLI.succeed(["apply"] + Self.arguments(root), stdin: lines)
                #expect(try store.count == model.count, "round \(round)")
                for i in 0..<2_000 {
                    #expect(try store.string(forKey: "k\(i)") == model["k\(i)"], "round \(round): k\(i)")
                }
                #expect(Self.readsThroughMappings(store), "round \(round): still reading through the mappings")
            }
            // The trims compacted the region, but no process shrank the file under this reader.
            let after = try FileManager.default.attributesOfItem(atPath: root + "/s")[.size] as? Int
            #expect(after.map { size in fileSize.map { size >= $0 } ?? false } == true)
            try CLI.succeed(["apply"] + Self.arguments(root), stdin: "clear\nset-string only one\n")
            #expect(try store.count == 1)
            #expect(try store.string(forKey: "only") == "one")
            #expect(try store.string(forKey: "k3") == nil)
        }
    }

    @Test("reads racing compactions and kills in other processes never see a torn, stale or missing value")
    func racingCompactionsAndKills() throws {
        try TemporaryDirectory.with { tmp in
            let root = tmp.path("root")
            let keys = 500
            try CLI.succeed(["apply", "--create"] + Self.arguments(root), stdin: Self.sets(0..<keys, round: 0))
            let store = try MappedKV(id: "s", directory: root, configuration: Self.configuration)
            defer { store.close() }
            #expect(Self.readsThroughMappings(store))
            // Each writer sets every key to its round's value, then compacts, round after round; a
            // value read is "v<round>-<i>" and no older than a round already read for that key.
            var lastRound = [Int](repeating: 0, count: keys)
            var state: UInt64 = 49
            var reads = 0
            var kills = 0
            for writer in 0..<4 {
                let first = 1 + writer * 40
                let script = (first..<(first + 40)).map { Self.sets(0..<keys, round: $0) + "trim\n" }.joined()
                let scratch = try TemporaryDirectory()
                defer { scratch.remove() }
                let input = try FileHandle(forReadingFrom: URL(fileURLWithPath: try scratch.write(script, to: "in")))
                defer { try? input.close() }
                let child = Process()
                child.executableURL = try CLI.binary.get()
                child.arguments = ["apply"] + Self.arguments(root)
                child.standardInput = input
                child.standardOutput = FileHandle.nullDevice
                child.standardError = FileHandle.nullDevice
                try child.run()
                var polls = 0
                while child.isRunning {
                    state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
                    let i = Int((state >> 33) % UInt64(keys))
                    let value = try #require(try store.string(forKey: "k\(i)"), "k\(i) went missing")
                    let parts = value.dropFirst().split(separator: "-")
                    let round = try #require(parts.first.flatMap { Int($0) }, "torn value \(value)")
                    #expect(value == "v\(round)-\(i)", "torn value \(value) for k\(i)")
                    #expect(round >= lastRound[i], "k\(i) went back from round \(lastRound[i]) to \(round)")
                    lastRound[i] = max(lastRound[i], round)
                    reads += 1
                    polls += 1
                    // Writers 1 and 3 are killed part-way, at a point that varies with the reads.
                    if writer % 2 == 1, polls == 300 + writer * 200 {
                        kill(child.processIdentifier, SIGKILL)
                        kills += 1
                    }
                }
                child.waitUntilExit()
                // A completed writer leaves an index file for its last compaction, which the
                // reader maps (after a killed one, the reader finishes its write-back from the
                // journal under the lock and reads its private copy from then on).
                if writer == 0 { #expect(Self.readsThroughMappings(store), "still reading through the mappings") }
            }
            #expect(kills == 2)
            #expect(reads > 1_000, "the reads overlapped the writers (\(reads))")
            try CLI.succeed(["verify", "--root", root, "--id", "s"])
        }
    }
}
