import Foundation
import MappedKV
import MappedKVCollections
import MappedKVProcessTestSupport
import Synchronization
import Testing

/// A bucket's change stream across real processes: `Bucket.changes()` in this test process while
/// `mappedkv bucket` processes write. Every wait is on the stream, with a deadline. (The `mappedkv
/// bucket watch` command is tested in MappedKVCLITests' WatchCommandTests.swift.)
@Suite("bucket changes across processes", .serialized)
struct BucketChangesProcessTests {
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
}
