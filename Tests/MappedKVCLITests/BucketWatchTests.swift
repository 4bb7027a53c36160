import Foundation
import MappedKV
import MappedKVCollections
import Synchronization
import Testing

/// A bucket's change stream across real processes: `Bucket.changes()` in this test process while
/// `mappedkv bucket` processes write, and `mappedkv bucket watch` as a child while they write.
/// Every wait is on the stream or the child's output, with a deadline.
@Suite("bucket changes and bucket watch across processes", .serialized)
struct BucketWatchTests {
    static func store(_ root: String) -> [String] { CLI.store(root, "feed") + ["--multi-process"] }

    /// The changes a stream yielded so far, read by a task on a thread of its own.
    final class Received: Sendable {
        private let state = Mutex<(changes: [BucketChange], ended: Bool)>(([], false))
        var changes: [BucketChange] { state.withLock { $0.changes } }
        var ended: Bool { state.withLock { $0.ended } }

        func append(_ change: BucketChange) { state.withLock { $0.changes.append(change) } }
        func end() { state.withLock { $0.ended = true } }

        /// Waits until `count` changes arrived or the stream ended or `deadline` passed.
        func wait(for count: Int, upTo deadline: Duration = .seconds(10)) async -> [BucketChange] {
            let end = ContinuousClock.now + deadline
            while changes.count < count, !ended, ContinuousClock.now < end {
                try? await Task.sleep(for: .milliseconds(1))
            }
            return changes
        }
    }

    @Test("Bucket.changes() yields another process's puts, removes and clears, in order, and no other bucket's")
    func streamAcrossProcesses() async throws {
        let tmp = try TemporaryDirectory()
        defer { tmp.remove() }
        let store = Self.store(tmp.path("root"))
        try CLI.succeed(["bucket", "put", "--create"] + store + ["posts", "old", "0"])
        let collections = try CollectionStore(
            id: "feed", directory: tmp.path("root"), configuration: Configuration(isMultiProcess: true))
        defer { collections.close() }
        let posts = collections.bucket("posts", serializer: RawEntrySerializer())
        let changes = posts.changes()
        let received = Received()
        let reader = Task(executorPreference: MultiProcessTests.consumerExecutor) {
            for await change in changes { received.append(change) }
            received.end()
        }

        try CLI.succeed(["bucket", "put"] + store + ["posts", "p1", #"{"n":1}"#])
        try CLI.succeed(["bucket", "put"] + store + ["other", "p1", "1"])
        try CLI.succeed(["bucket", "put"] + store + ["posts", "p2", "2"])
        try CLI.succeed(["bucket", "index", "add"] + store + ["posts", "n", "int", "value.n"])
        try CLI.succeed(["bucket", "put"] + store + ["posts", "p1", #"{"n":3}"#])
        try CLI.succeed(["bucket", "rm"] + store + ["posts", "p1"])
        try CLI.succeed(["bucket", "clear"] + store + ["posts"])
        let expected: [BucketChange] = [
            .put(key: "p1"), .put(key: "p2"), .put(key: "p1"), .remove(key: "p1"),
            // The clear removes the two entries left, in the store's order.
        ]
        let got = await received.wait(for: expected.count + 2)
        #expect(Array(got.prefix(expected.count)) == expected, "\(got)")
        #expect(Set(got.dropFirst(expected.count)) == [.remove(key: "old"), .remove(key: "p2")], "\(got)")

        // This process's own write, on the same stream, after the other process's.
        try posts.put(Array("4".utf8), forKey: "mine")
        #expect(await received.wait(for: expected.count + 3).last == .put(key: "mine"))

        // Closing the store ends the stream: the reader's loop finishes.
        collections.close()
        _ = await received.wait(for: .max)
        #expect(received.ended, "the stream ended with the store")
        #expect(received.changes.count == expected.count + 3, "nothing else arrived: \(received.changes)")
        await reader.value
    }

    @Test("mappedkv bucket watch prints one JSON line per change as other processes write")
    func watchCommand() async throws {
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
        let lines = MultiProcessTests.WatchOutput(reading: output)
        let notices = MultiProcessTests.WatchOutput(reading: errors)
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
