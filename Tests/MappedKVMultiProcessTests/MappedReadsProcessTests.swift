import Foundation
import Glibc
import MappedKVProcessTestSupport
import Testing

@testable import MappedKV

// Reading through the mappings (docs/FORMAT.md 12.5) while real `mappedkv` processes append,
// compact, shrink and are killed: the reader stays in that mode, keeps no private copy of the
// region, and never reads a torn, stale or missing value.

@Suite("Reads through the mappings across processes", .serialized, .timeLimit(.minutes(5)))
struct MappedReadsProcessTests {
    static let key = "mapped-process-key"

    static func arguments(_ root: String, encrypted: Bool) -> [String] {
        CLI.store(root, "s") + ["--multi-process", "--lock", "shared-memory"] + (encrypted ? ["--crypt-key", key] : [])
    }

    static func configuration(encrypted: Bool) -> Configuration {
        var configuration = Configuration(isMultiProcess: true, processLock: .sharedMemory)
        configuration.cryptKey = encrypted ? CryptKey(Array(key.utf8)) : nil
        return configuration
    }

    static func readsThroughMappings(_ store: MappedKV) -> Bool {
        store.shared.core.withLock { $0.mappedReads.isActive && $0.loaded.mirror.isEmpty }
    }

    /// `apply` lines that set keys `k<i>` for `keys` to `v<round>-<i>`.
    static func sets(_ keys: some Sequence<Int>, round: Int) -> String {
        keys.map { "set-string k\($0) v\(round)-\($0)\n" }.joined()
    }

    /// Replaces the index file at `path` by a damaged copy, or deletes it, by rename.
    static func vandalize(_ path: String, seed: UInt64) throws {
        guard var bytes = FileManager.default.contents(atPath: path).map({ [UInt8]($0) }), bytes.count > 4_100
        else { return }
        switch seed % 4 {
        case 0: bytes[4_096 + Int(seed % UInt64(bytes.count - 4_096))] ^= 0x10
        case 1: bytes = Array(bytes.prefix(Int(seed % UInt64(bytes.count))))
        case 2: bytes = [UInt8](repeating: 0, count: bytes.count)
        default:
            try? FileManager.default.removeItem(atPath: path)
            return
        }
        try Data(bytes).write(to: URL(fileURLWithPath: path), options: .atomic)
    }

    @Test(
        "a reader sees every append, removal, compaction and clear of other processes, and stays mapped",
        arguments: [false, true])
    func followsOtherProcesses(encrypted: Bool) throws {
        try TemporaryDirectory.with { tmp in
            let root = tmp.path("root")
            var model: [String: String] = [:]
            for i in 0..<2_000 { model["k\(i)"] = "v0-\(i)" }
            try CLI.succeed(
                ["apply", "--create"] + Self.arguments(root, encrypted: encrypted),
                stdin: Self.sets(0..<2_000, round: 0))
            let store = try MappedKV(id: "s", directory: root, configuration: Self.configuration(encrypted: encrypted))
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
                try CLI.succeed(["apply"] + Self.arguments(root, encrypted: encrypted), stdin: lines)
                #expect(try store.count == model.count, "round \(round)")
                for i in 0..<2_000 {
                    #expect(try store.string(forKey: "k\(i)") == model["k\(i)"], "round \(round): k\(i)")
                }
                #expect(Self.readsThroughMappings(store), "round \(round): still reading through the mappings")
            }
            // The trims compacted the region, but no process shrank the file under this reader.
            let after = try FileManager.default.attributesOfItem(atPath: root + "/s")[.size] as? Int
            #expect(after.map { size in fileSize.map { size >= $0 } ?? false } == true)
            try CLI.succeed(
                ["apply"] + Self.arguments(root, encrypted: encrypted), stdin: "clear\nset-string only one\n")
            #expect(try store.count == 1)
            #expect(try store.string(forKey: "only") == "one")
            #expect(try store.string(forKey: "k3") == nil)
        }
    }

    /// This process's mappings of the file at `path` (`replaced`: of one that was there and has
    /// been deleted or replaced since). The whole path, since tests running beside this one map
    /// index files of their own.
    static func mappings(of path: String, replaced: Bool) -> [String] {
        // Read to the end: /proc files report a size of 0, and a whole-file read of one stops
        // after its first page.
        let data = FileHandle(forReadingAtPath: "/proc/self/maps").map { $0.readDataToEndOfFile() } ?? Data()
        let maps = String(decoding: data, as: UTF8.self)
        let suffix = " " + path + (replaced ? " (deleted)" : "")
        return maps.split(separator: "\n").map(String.init).filter { $0.hasSuffix(suffix) }
    }

    @Test("a reader lets go of the index file another process's compaction replaced")
    func releasesReplacedIndexFile() throws {
        try TemporaryDirectory.with { tmp in
            let root = tmp.path("root")
            let arguments = Self.arguments(root, encrypted: false)
            try CLI.succeed(["apply", "--create"] + arguments, stdin: Self.sets(0..<5_000, round: 0))
            let indexPath = URL(fileURLWithPath: root + "/s.index").resolvingSymlinksInPath().path
            let store = try MappedKV(id: "s", directory: root, configuration: Self.configuration(encrypted: false))
            defer { store.close() }
            #expect(try store.string(forKey: "k1") == "v0-1")
            // The path as /proc/self/maps shows it, so that the checks below can see the mapping.
            try #require(!Self.mappings(of: indexPath, replaced: false).isEmpty)
            #expect(Self.mappings(of: indexPath, replaced: true).isEmpty)
            // The writer's compaction renames a new index file over the one this reader maps.
            try CLI.succeed(["apply"] + arguments, stdin: Self.sets(0..<5_000, round: 1) + "trim\n")
            #expect(try store.string(forKey: "k1") == "v1-1")
            #expect(Self.readsThroughMappings(store), "the catch-up mapped the new index file")
            // The old mapping goes on a thread of its own: wait for that event, with a deadline.
            let deadline = ContinuousClock.now + .seconds(30)
            while !Self.mappings(of: indexPath, replaced: true).isEmpty, ContinuousClock.now < deadline {
                sched_yield()
            }
            #expect(Self.mappings(of: indexPath, replaced: true).isEmpty, "the replaced index file is still mapped")
        }
    }

    @Test(
        "reads racing compactions and kills in other processes never see a torn, stale or missing value",
        arguments: [false, true])
    func racingCompactionsAndKills(encrypted: Bool) throws {
        try TemporaryDirectory.with { tmp in
            let root = tmp.path("root")
            let keys = 500
            try CLI.succeed(
                ["apply", "--create"] + Self.arguments(root, encrypted: encrypted), stdin: Self.sets(0..<keys, round: 0)
            )
            let store = try MappedKV(id: "s", directory: root, configuration: Self.configuration(encrypted: encrypted))
            defer { store.close() }
            #expect(Self.readsThroughMappings(store))
            // Two writers run at once, each on its half of the keys: each sets its keys to its
            // round's value, then compacts, round after round. A value read is "v<round>-<i>" and
            // no older than a round already read for that key.
            var lastRound = [Int](repeating: 0, count: keys)
            var state: UInt64 = 49
            var reads = 0
            var kills = 0
            var vandalized = 0
            let scratch = try TemporaryDirectory()
            defer { scratch.remove() }
            for phase in 0..<4 {
                let first = 1 + phase * 40
                var children: [Process] = []
                var inputs: [FileHandle] = []
                for half in 0..<2 {
                    let range = (half * keys / 2)..<((half + 1) * keys / 2)
                    let script = (first..<(first + 40)).map { Self.sets(range, round: $0) + "trim\n" }.joined()
                    let path = try scratch.write(script, to: "in-\(phase)-\(half)")
                    let input = try FileHandle(forReadingFrom: URL(fileURLWithPath: path))
                    inputs.append(input)
                    let child = Process()
                    child.executableURL = try CLI.binary.get()
                    child.arguments = ["apply"] + Self.arguments(root, encrypted: encrypted)
                    child.standardInput = input
                    child.standardOutput = FileHandle.nullDevice
                    child.standardError = FileHandle.nullDevice
                    try child.run()
                    children.append(child)
                }
                defer { for input in inputs { try? input.close() } }
                var polls = 0
                while children.contains(where: \.isRunning) {
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
                    // In phases 1 and 3 one writer is killed part-way, at a point that varies with the reads.
                    if phase % 2 == 1, polls == 300 + phase * 200, children[phase / 2].isRunning {
                        kill(children[phase / 2].processIdentifier, SIGKILL)
                        kills += 1
                    }
                    // Every so often the index file is replaced by a damaged copy (a flipped
                    // byte in its buckets, a cut, zeros) or deleted, as a tool or a person might,
                    // by writing a new file and renaming it over the old one: files a process
                    // has mapped are never changed in place (docs/FORMAT.md 12.5).
                    if polls % 97 == 0 {
                        try Self.vandalize(root + "/s.index", seed: UInt64(polls) &+ state)
                        vandalized += 1
                    }
                }
                for child in children { child.waitUntilExit() }
            }
            print(
                "mapped reader (encrypted: \(encrypted)): \(reads) reads, \(kills) writers killed, \(vandalized) index files damaged"
            )
            #expect(kills >= 1, "a writer was killed part-way (\(kills))")
            #expect(vandalized > 5, "the index file was replaced by damaged copies (\(vandalized))")
            #expect(reads > 1_000, "the reads overlapped the writers (\(reads))")
            try CLI.succeed(["verify", "--root", root, "--id", "s"] + (encrypted ? ["--crypt-key", Self.key] : []))
        }
    }
}
