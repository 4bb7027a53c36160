import Foundation
import MappedKVProcessTestSupport
import Testing

/// `mappedkv stress --workload cache`: 4 real processes put, get, remove and trim random keys of
/// one cache at the same time, each through a memory tier of its own over the shared disk cache
/// (or the disk cache alone), optionally killed with SIGKILL every 50 ms and restarted. No get
/// returns bytes not put for its key, and none is stale: none returns a value older than the last
/// write of its key acknowledged 50 ms before the get began (the rule itself is tested on synthetic
/// journals in `CacheStressTimelineTests`). Afterwards the directory verifies (also through
/// `mappedkv cache verify`), fits the byte limit and has no orphan. The run's final check is
/// shown to catch a foreign value and a damaged file.
@Suite("cache stress", .serialized)
struct CacheStressTests {
    /// Runs a cache stress run on `root`, requiring success, `operations` acknowledged
    /// operations and no violation.
    @discardableResult
    func stress(
        _ root: String, _ arguments: [String], operations: Int, sourceLocation: SourceLocation = #_sourceLocation
    ) throws -> StressTests.Summary {
        let result = try CLI.succeed(
            ["stress", "--workload", "cache", "--root", root] + arguments, sourceLocation: sourceLocation)
        let summary = try #require(
            StressTests.Summary(result.stdout), "no summary line: \(result)", sourceLocation: sourceLocation)
        #expect(summary.violations == 0, "\(result)", sourceLocation: sourceLocation)
        #expect(summary.operations == operations, "\(result)", sourceLocation: sourceLocation)
        return summary
    }

    /// Checks through the CLI that the cache in `root` verifies and has no orphan, and returns its stats.
    @discardableResult
    func checkCache(_ root: String, sourceLocation: SourceLocation = #_sourceLocation) throws -> [String: Int] {
        let cache = CacheCLI(dir: root)
        let verify = try cache.succeed("verify", sourceLocation: sourceLocation)
        #expect(verify.stdoutData.isEmpty, "\(verify)", sourceLocation: sourceLocation)
        let stats = try cache.stats(sourceLocation: sourceLocation)
        #expect(stats["orphans"] == 0, "\(stats)", sourceLocation: sourceLocation)
        #expect(stats["files"] == (try cache.valueFiles().count), "\(stats)", sourceLocation: sourceLocation)
        return stats
    }

    @Test("4 processes of 300 operations, each with a memory tier: no stale get, the directory verifies")
    func concurrent() throws {
        try TemporaryDirectory.with { tmp in
            let root = tmp.path("root")
            let summary = try stress(root, ["--processes", "4", "--ops", "300", "--seed", "41"], operations: 1200)
            #expect(summary.processes == 4 && summary.kills == 0, "\(summary)")
            let stats = try checkCache(root)
            #expect(stats["inline"]! > 0 && stats["files"]! > 0, "values on both sides of the threshold: \(stats)")
        }
    }

    @Test("memory tiers, children killed every 50 ms and restarted, under a byte limit: no stale get, no orphans")
    func kills() throws {
        try TemporaryDirectory.with { tmp in
            let root = tmp.path("root")
            let limit = 400_000
            let summary = try stress(
                root,
                [
                    "--processes", "4", "--ops", "300", "--seed", "42", "--kill-interval-ms", "50",
                    "--byte-limit", "\(limit)",
                ],
                operations: 1200)
            #expect(summary.kills > 0, "\(summary)")
            let stats = try checkCache(root)
            #expect(stats["bytes"]! <= limit, "\(stats)")
            print("cache stress with kills: \(summary)")
        }
    }

    @Test("the disk cache alone, children killed every 50 ms, under a byte limit: no stale get, no orphans")
    func diskOnlyKills() throws {
        try TemporaryDirectory.with { tmp in
            let root = tmp.path("root")
            let limit = 400_000
            let summary = try stress(
                root,
                [
                    "--processes", "4", "--ops", "300", "--seed", "44", "--kill-interval-ms", "50",
                    "--byte-limit", "\(limit)", "--disk-only",
                ],
                operations: 1200)
            #expect(summary.kills > 0, "\(summary)")
            let stats = try checkCache(root)
            #expect(stats["bytes"]! <= limit, "\(stats)")
        }
    }

    @Test("the final check catches a foreign value and a damaged file")
    func verifierFails() throws {
        try TemporaryDirectory.with { tmp in
            let root = tmp.path("root")
            try stress(root, ["--processes", "2", "--ops", "100", "--seed", "43", "--disk-only"], operations: 200)
            try stress(root, ["--verify-only"], operations: 200)

            let cache = CacheCLI(dir: root)
            try cache.succeed("put", ["planted", "not a stress value"])
            let planted = try CLI.fail(["stress", "--workload", "cache", "--root", root, "--verify-only"])
            #expect(StressTests.Summary(planted.stdout)?.violations == 1, "\(planted)")
            #expect(planted.stderr.contains("key planted left in the cache: no checksum at the end"), "\(planted)")
            try cache.succeed("rm", ["planted"])

            let name = try #require(try cache.valueFiles().first, "no value file after the run")
            let path = root + "/files/" + name
            var bytes = try Data(contentsOf: URL(fileURLWithPath: path))
            bytes[bytes.count - 1] ^= 0x01
            try bytes.write(to: URL(fileURLWithPath: path))
            let damaged = try CLI.fail(["stress", "--workload", "cache", "--root", root, "--verify-only"])
            #expect(
                damaged.stderr.contains("the cache does not verify after a trim: ")
                    && damaged.stderr.contains("the file \(name) is missing, short or fails its CRC"), "\(damaged)")
        }
    }

    @Test("--byte-limit and --disk-only need the cache workload; the limit must not be negative")
    func badOptions() throws {
        try TemporaryDirectory.with { tmp in
            let root = tmp.path("root")
            let other = try CLI.fail(["stress", "--root", root, "--byte-limit", "1000"])
            #expect(other.stderr.contains("--byte-limit needs --workload cache"), "\(other)")
            let diskOnly = try CLI.fail(["stress", "--root", root, "--disk-only"])
            #expect(diskOnly.stderr.contains("--disk-only needs --workload cache"), "\(diskOnly)")
            let negative = try CLI.fail(["stress", "--workload", "cache", "--root", root, "--byte-limit=-1"])
            #expect(negative.stderr.contains("--byte-limit must not be negative"), "\(negative)")
        }
    }
}
