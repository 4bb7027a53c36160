import Foundation
import MappedKVProcessTestSupport
import Testing

/// `mappedkv stress`: several processes share one multi-process store, optionally killed and
/// restarted, and the store is verified against their journals.
@Suite("stress", .serialized)
struct StressTests {
    /// The fields of the summary line `stress: processes P, operations N, ops/s R, kills K, violations V`.
    struct Summary: CustomStringConvertible {
        var fields: [String: Int] = [:]

        /// Parses the one summary line of `stdout`; nil if there is not exactly one.
        init?(_ stdout: String) {
            let lines = stdout.split(separator: "\n").filter { $0.hasPrefix("stress: ") }
            guard lines.count == 1 else { return nil }
            for field in lines[0].dropFirst("stress: ".count).split(separator: ",") {
                let words = field.split(separator: " ")
                guard words.count == 2, let value = Int(words[1]) else { return nil }
                fields[String(words[0])] = value
            }
            guard ["processes", "operations", "ops/s", "kills", "violations"].allSatisfy({ fields[$0] != nil }) else {
                return nil
            }
        }

        var processes: Int { fields["processes"]! }
        var operations: Int { fields["operations"]! }
        var kills: Int { fields["kills"]! }
        var violations: Int { fields["violations"]! }
        var description: String {
            fields.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")
        }
    }

    /// Runs `stress` on `root` with `arguments`, requiring success and a summary with no violations
    /// and `operations` acknowledged operations.
    @discardableResult
    func stress(
        _ root: String, _ arguments: [String], operations: Int, sourceLocation: SourceLocation = #_sourceLocation
    ) throws -> Summary {
        let result = try CLI.run(["stress", "--root", root] + arguments)
        // A failed run keeps its store and the children's journals outside the test's temporary
        // directory (which is removed), so that what went wrong can be read afterwards.
        let kept = result.succeeded ? nil : Self.keep(root)
        let detail = "\(result)" + (kept.map { "\nstore and journals kept in \($0)" } ?? "")
        #expect(result.succeeded, "expected success: \(detail)", sourceLocation: sourceLocation)
        let summary = try #require(Summary(result.stdout), "no summary line: \(detail)", sourceLocation: sourceLocation)
        #expect(summary.violations == 0, "\(detail)", sourceLocation: sourceLocation)
        #expect(summary.operations == operations, "\(result)", sourceLocation: sourceLocation)
        return summary
    }

    /// Copies `root` to a new folder in the system's temporary directory and returns its path;
    /// nil if the copy failed.
    static func keep(_ root: String) -> String? {
        let kept = FileManager.default.temporaryDirectory
            .appendingPathComponent("mappedkv-stress-failure-\(UUID().uuidString)").path
        return (try? FileManager.default.copyItem(atPath: root, toPath: kept)) == nil ? nil : kept
    }

    @Test("4 processes of 300 mixed operations on a plain store: no violations")
    func plain() throws {
        try TemporaryDirectory.with { tmp in
            let summary = try stress(
                tmp.path("root"), ["--processes", "4", "--ops", "300", "--seed", "11"], operations: 1200)
            #expect(summary.processes == 4)
            #expect(summary.kills == 0)
        }
    }

    @Test("4 processes of 300 mixed operations on an encrypted store: no violations", arguments: [false, true])
    func encrypted(aes256: Bool) throws {
        try TemporaryDirectory.with { tmp in
            let key = ["--crypt-key", "stress-key"] + (aes256 ? ["--aes256"] : [])
            try stress(tmp.path("root"), ["--processes", "4", "--ops", "300", "--seed", "12"] + key, operations: 1200)
        }
    }

    @Test("children killed every 20 ms and restarted: no violations", arguments: [false, true])
    func kills(encrypted: Bool) throws {
        try TemporaryDirectory.with { tmp in
            let key = encrypted ? ["--crypt-key", "stress-key"] : []
            let summary = try stress(
                tmp.path("root"),
                ["--processes", "4", "--ops", "300", "--seed", "13", "--kill-interval-ms", "20"] + key,
                operations: 1200)
            #expect(summary.kills > 0, "no child was killed: \(summary)")
            print("stress with kills\(encrypted ? ", encrypted" : ""): \(summary)")
        }
    }

    @Test(
        "shared-memory lock: children killed every 20 ms and restarted, no violation and no lost increment",
        arguments: ["mixed", "counter"])
    func sharedMemoryLockKills(workload: String) throws {
        try TemporaryDirectory.with { tmp in
            let root = tmp.path("root")
            let summary = try stress(
                root,
                [
                    "--processes", "4", "--ops", "300", "--seed", "15", "--kill-interval-ms", "20", "--workload",
                    workload, "--lock", "shared-memory",
                ],
                operations: 1200)
            #expect(summary.kills > 0)
            if workload == "counter" {
                // The verifier refuses a value acknowledged twice (a lost update); every acknowledged
                // increment is in the counter, and one a kill cut off after its write may be too.
                let counter = try CLI.succeed(
                    [
                        "get", "--root", root, "--id", "stress", "--type", "int64", "--multi-process", "--lock",
                        "shared-memory", "counter",
                    ])
                let value = try #require(Int(counter.stdout.trimmingCharacters(in: .whitespacesAndNewlines)))
                #expect(value >= 1200 && value <= 1200 + summary.kills, "\(counter)")
            }
            print("stress with kills, shared-memory lock, \(workload): \(summary)")
        }
    }

    @Test("4 processes creating a store at the same moment: 20 times, no increment is lost")
    func concurrentCreation() throws {
        try TemporaryDirectory.with { tmp in
            for repetition in 0..<20 {
                let root = tmp.path("root-\(repetition)")
                try stress(
                    root,
                    ["--processes", "4", "--ops", "50", "--workload", "counter", "--seed", "\(100 + repetition)"],
                    operations: 200)
                let counter = try CLI.succeed(["get", "--root", root, "--id", "stress", "--type", "int64", "counter"])
                #expect(counter.stdout == "200\n", "repetition \(repetition): \(counter)")
            }
        }
    }

    @Test("the verifier catches a key removed behind the journals' back, and a counter moved")
    func verifierFails() throws {
        try TemporaryDirectory.with { tmp in
            let root = tmp.path("root")
            try stress(root, ["--processes", "2", "--ops", "150", "--seed", "14"], operations: 300)
            // Untouched, the run verifies again.
            try stress(root, ["--verify-only"], operations: 300)

            let keys = try CLI.succeed(["keys", "--root", root, "--id", "stress"]).stdout.split(separator: "\n")
            let victim = String(try #require(keys.first { $0.hasPrefix("c0/") }, "no key of child 0: \(keys)"))
            try CLI.succeed(["remove", "--root", root, "--id", "stress", "--multi-process", victim])
            let removed = try CLI.fail(["stress", "--root", root, "--verify-only"])
            #expect(Summary(removed.stdout)?.violations == 1, "\(removed)")
            #expect(removed.stderr.contains("key \(victim): the store has absent"), "\(removed)")

            let counter = try CLI.succeed(["get", "--root", root, "--id", "stress", "--type", "int64", "counter"])
            let value = try #require(Int64(counter.stdout.trimmingCharacters(in: .whitespacesAndNewlines)))
            try CLI.succeed([
                "set", "--root", root, "--id", "stress", "--multi-process", "--type", "int64", "counter",
                "\(value + 1)",
            ])
            let moved = try CLI.fail(["stress", "--root", root, "--verify-only"])
            #expect(Summary(moved.stdout)?.violations == 2, "\(moved)")
            #expect(moved.stderr.contains("the counter is \(value + 1)"), "\(moved)")
        }
    }
}
