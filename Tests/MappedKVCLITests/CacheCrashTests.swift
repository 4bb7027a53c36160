import Foundation
import Glibc
import MappedKVProcessTestSupport
import Testing

/// A `mappedkv cache put` killed with SIGKILL at each point of a set (the hidden `--crash-at`:
/// half of the temporary file written, the file renamed into place but not recorded, the record
/// written with the manifest's lock still held), over no previous value, an inline one and one
/// in a file: afterwards a get of the key is a miss, the new value or the previous value, never
/// other bytes (and never the new value before it was recorded); a trim leaves no orphan and
/// verify clean; and the cache keeps working.
@Suite("cache crashes")
struct CacheCrashTests {
    /// The raw values of the CLI's `--crash-at` points, in the order a set reaches them.
    static let points = ["writing-temporary-file", "renamed-before-recording", "recorded-before-unlocking"]

    /// What the key held before the killed put.
    enum Previous: String, CaseIterable, Sendable {
        case none, inline, file

        /// The value stored first, if any.
        var value: [UInt8]? {
            switch self {
            case .none: nil
            case .inline: Array("previous inline value".utf8)
            case .file: CacheValues.random(count: 4000, seed: 31)
            }
        }
    }

    @Test(
        "a put killed at a crash point leaves a miss, the new or the previous value, and nothing a trim leaves behind",
        arguments: points, Previous.allCases)
    func killedPut(point: String, previous: Previous) throws {
        try TemporaryDirectory.with { tmp in
            let cache = CacheCLI(dir: tmp.path("cache"), options: ["--inline-threshold", "100"])
            try cache.put("other", bytes: CacheValues.random(count: 700, seed: 32), in: tmp)
            if let value = previous.value { try cache.put("key", bytes: value, in: tmp) }
            let new = CacheValues.random(count: 9000, seed: 33)
            let path = tmp.path("new")
            try Data(new).write(to: URL(fileURLWithPath: path))

            let killed = try cache.run("put", ["--crash-at", point, "key", "--file", path])
            #expect(
                killed.terminationReason == .uncaughtSignal && killed.status == SIGKILL,
                "the put must die of SIGKILL at \(point): \(killed)")

            let read = try cache.get("key")
            let allowed: [[UInt8]?] = [nil, new] + (previous.value.map { [$0] } ?? [])
            #expect(allowed.contains(read), "after a kill at \(point), get returned \(read.map(\.count) ?? -1) bytes")
            if point != "recorded-before-unlocking" {
                #expect(read != new, "the value was served before it was recorded (killed at \(point))")
            }
            #expect(try cache.get("other") == CacheValues.random(count: 700, seed: 32))

            try cache.succeed("trim")
            let verify = try cache.succeed("verify")
            #expect(verify.stdoutData.isEmpty, "verify after trim: \(verify)")
            let stats = try cache.stats()
            #expect(stats["orphans"] == 0, "\(stats)")
            #expect(stats["files"] == (try cache.valueFiles().count), "every file is recorded: \(stats)")
            #expect(allowed.contains(try cache.get("key")), "the outcome changed after the trim")

            try cache.put("key", bytes: new, in: tmp)
            #expect(try cache.get("key") == new)
            #expect(try cache.stats()["orphans"] == 0)
        }
    }
}
