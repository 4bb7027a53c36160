import Foundation
import MappedKVProcessTestSupport
import Synchronization
import Testing

/// `mappedkv watch`: a child that prints another process's changes to a multi-process store as
/// they happen, while other `mappedkv` processes write. Every wait is on the child's output, with
/// a deadline.
@Suite("watch command", .serialized)
struct WatchCommandTests {
    /// The thread the tests that poll a watch child's output run on. On the cooperative pool, the
    /// tests running in parallel (which block pool threads while they wait for child processes or
    /// build the documentation's examples) could hold up such a test for longer than the child's
    /// `--seconds`, and it would write to the store after the child had exited.
    static let executor = ThreadExecutor(name: "watch command tests")

    /// The options of the store `s` in `root`, in multi-process mode unless told otherwise.
    func storeArguments(_ root: String, multiProcess: Bool = true) -> [String] {
        CLI.store(root, "s") + (multiProcess ? ["--multi-process"] : [])
    }

    /// The output of a running `mappedkv watch`, collected by a thread of its own.
    final class WatchOutput: Sendable {
        private let text = Mutex("")
        var current: String { text.withLock { $0 } }

        init(reading pipe: Pipe) {
            let handle = pipe.fileHandleForReading
            Thread { [self] in
                while true {
                    let chunk = handle.availableData
                    if chunk.isEmpty { return }
                    text.withLock { $0 += String(decoding: chunk, as: UTF8.self) }
                }
            }.start()
        }

        /// Waits until the output contains `line` or `deadline` has passed; returns whether it does.
        func wait(for line: String, upTo deadline: Duration = .seconds(2)) async -> Bool {
            let end = ContinuousClock.now + deadline
            while !current.contains(line) {
                guard ContinuousClock.now < end else { return false }
                try? await Task.sleep(for: .milliseconds(1))
            }
            return true
        }
    }

    @Test("mappedkv watch prints another process's changes as they happen")
    func watchCommand() async throws {
        try await withTaskExecutorPreference(Self.executor) {
            try await withTemporaryDirectory { tmp in
                let root = tmp.path("root")
                try CLI.succeed(["set", "--create"] + storeArguments(root) + ["k", "v"])
                let watcher = Process()
                watcher.executableURL = try CLI.binary.get()
                watcher.arguments = ["watch"] + storeArguments(root) + ["--seconds", "30"]
                let pipe = Pipe()
                watcher.standardOutput = pipe
                try watcher.run()
                defer {
                    kill(watcher.processIdentifier, SIGKILL)  // SIGTERM may be blocked in children of the test runner
                    watcher.waitUntilExit()
                }
                let output = WatchOutput(reading: pipe)
                #expect(await output.wait(for: "watching\n", upTo: .seconds(10)), "\(output.current)")
                try CLI.succeed(["set", "--create"] + storeArguments(root) + ["pushed", "1"])
                #expect(await output.wait(for: "appended(1) at sequence"), "\(output.current)")
                #expect(output.current.contains("keys [\"pushed\"]"), "\(output.current)")
                try CLI.succeed(["apply", "--create"] + storeArguments(root), stdin: "clear\n")
                #expect(await output.wait(for: "all keys"), "\(output.current)")
            }
        }
    }

    @Test("mappedkv watch refuses a store not opened in multi-process mode")
    func watchNeedsMultiProcess() throws {
        try TemporaryDirectory.with { (tmp) throws -> Void in
            let result = try CLI.fail(["watch"] + storeArguments(tmp.path("root"), multiProcess: false))
            #expect(result.stderr.contains("--multi-process"), "\(result)")
        }
    }
}

/// `mappedkv bucket watch`: a child that prints one JSON line per change of one bucket as other
/// `mappedkv bucket` processes write. Every wait is on the child's output, with a deadline.
@Suite("bucket watch command", .serialized)
struct BucketWatchCommandTests {
    static func store(_ root: String) -> [String] { CLI.store(root, "feed") + ["--multi-process"] }

    @Test("mappedkv bucket watch prints one JSON line per change as other processes write")
    func watchCommand() async throws {
        try await withTaskExecutorPreference(WatchCommandTests.executor) {
            let tmp = try TemporaryDirectory()
            defer { tmp.remove() }
            let store = Self.store(tmp.path("root"))
            try CLI.succeed(["bucket", "put", "--create"] + store + ["posts", "old", "0"])
            let watcher = Process()
            watcher.executableURL = try CLI.binary.get()
            watcher.arguments = ["bucket", "watch"] + store + ["posts", "--seconds", "60"]
            let output = Pipe()
            let errors = Pipe()
            watcher.standardOutput = output
            watcher.standardError = errors
            try watcher.run()
            defer {
                kill(watcher.processIdentifier, SIGKILL)  // SIGTERM may be blocked in children of the test runner
                watcher.waitUntilExit()
            }
            let lines = WatchCommandTests.WatchOutput(reading: output)
            let notices = WatchCommandTests.WatchOutput(reading: errors)
            #expect(await notices.wait(for: "watching bucket posts\n", upTo: .seconds(10)), "\(notices.current)")

            try CLI.succeed(["bucket", "put"] + store + ["posts", "k\"1", "1"])
            try CLI.succeed(["bucket", "put"] + store + ["other", "x", "1"])
            try CLI.succeed(["bucket", "rm"] + store + ["posts", "k\"1"])
            try CLI.succeed(["bucket", "put"] + store + ["posts", "k2", "2"])
            let expected = """
                {"bucket":"posts","key":"k\\"1","change":"put"}
                {"bucket":"posts","key":"k\\"1","change":"remove"}
                {"bucket":"posts","key":"k2","change":"put"}

                """
            #expect(await lines.wait(for: expected, upTo: .seconds(10)), "\(lines.current)")
            #expect(lines.current == expected, "only the bucket's changes, in order")
        }
    }

    @Test("bucket watch exits 0 after --seconds, and refuses bad options")
    func watchOptions() throws {
        try TemporaryDirectory.with { tmp in
            let store = Self.store(tmp.path("root"))
            try CLI.succeed(["bucket", "put", "--create"] + store + ["posts", "a", "1"])
            let timed = try CLI.succeed(["bucket", "watch"] + store + ["posts", "--seconds", "0.2"])
            #expect(timed.stdout.isEmpty && timed.stderr.contains("watching bucket posts"), "\(timed)")
            let single = try CLI.fail(["bucket", "watch"] + CLI.store(tmp.path("root"), "feed") + ["posts"])
            #expect(single.stderr.contains("--multi-process"), "\(single)")
            let zero = try CLI.fail(["bucket", "watch"] + store + ["posts", "--seconds", "0"])
            #expect(zero.stderr.contains("--seconds"), "\(zero)")
            let buffer = try CLI.fail(["bucket", "watch"] + store + ["posts", "--buffer-limit", "0"])
            #expect(buffer.stderr.contains("--buffer-limit"), "\(buffer)")
            let missing = try CLI.run(["bucket", "watch"] + Self.store(tmp.path("nothing")) + ["posts"])
            #expect(missing.failedCleanly && missing.status == 3, "a missing store is not created: \(missing)")
            #expect(!FileManager.default.fileExists(atPath: tmp.path("nothing") + "/feed"))
        }
    }
}
