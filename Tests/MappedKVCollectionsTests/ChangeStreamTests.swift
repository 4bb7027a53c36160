import Foundation
import MappedKV
import Testing

@testable import MappedKVCollections

/// `Bucket.changes()` with this process's own writes: what each write yields, the buffer's bound,
/// and how the stream ends. Other processes' writes are tested with real processes in
/// MappedKVMultiProcessTests (BucketChangesProcessTests.swift).
@Suite("Bucket change streams")
struct ChangeStreamTests {
    struct Item: Codable, Sendable, Equatable {
        var n: Int
    }

    /// Reads `count` changes from `changes`, or fewer if the stream ends or `deadline` passes
    /// first (the deadline finishes the stream, so a missing change fails the test, never hangs it).
    static func take(
        _ count: Int, from changes: BucketChanges, within deadline: Duration = .seconds(10)
    ) async -> [BucketChange] {
        let timeout = Task {
            try await Task.sleep(for: deadline)
            changes.finish()
        }
        defer { timeout.cancel() }
        var iterator = changes.makeAsyncIterator()
        var result: [BucketChange] = []
        while result.count < count, let change = await iterator.next() { result.append(change) }
        return result
    }

    @Test("own puts, removes, imports, clears and bucket removals are yielded in order; other buckets are not")
    func ownWrites() async throws {
        let dir = try ScratchDirectory()
        let collections = try CollectionStore(id: "feed", directory: dir.path)
        defer { collections.close() }
        let items = collections.bucket("items", of: Item.self)
        let other = collections.bucket("items2", of: Item.self)
        try items.put(Item(n: 0), forKey: "before")  // before the stream: not yielded
        let changes = items.changes()

        try items.put(Item(n: 1), forKey: "a")
        try other.put(Item(n: 1), forKey: "a")
        try items.put(Item(n: 2), forKey: "b")
        try items.put(Item(n: 3), forKey: "a")
        #expect(try items.remove("a"))
        #expect(try !items.remove("absent"))  // removed nothing: yields nothing
        try items.addIndex("n", type: .int, source: .valuePath(["n"]))  // an index record: nothing
        let now = Date()
        try items.importEntries([
            Entry(bucket: "items", key: "c", value: Item(n: 4), created: now, modified: now),
            Entry(bucket: "items", key: "d", value: Item(n: 5), created: now, modified: now),
        ])
        let expected: [BucketChange] = [
            .put(key: "a"), .put(key: "b"), .put(key: "a"), .remove(key: "a"), .put(key: "c"), .put(key: "d"),
        ]
        #expect(await Self.take(expected.count, from: changes) == expected)

        // A clear yields a remove per entry it removed (in the store's order), then nothing.
        #expect(try items.removeAll() == 4)
        let cleared = await Self.take(4, from: changes)
        #expect(Set(cleared) == Set(["before", "b", "c", "d"].map { BucketChange.remove(key: $0) }))
        #expect(cleared.count == 4)

        try items.put(Item(n: 6), forKey: "e")
        try other.put(Item(n: 6), forKey: "e")
        #expect(try collections.removeBucket("items") == 1)
        #expect(try collections.removeBucket("items2") == 2)
        #expect(await Self.take(2, from: changes) == [.put(key: "e"), .remove(key: "e")])
        #expect(changes.feed.waitingCount == 0, "no change of another bucket was queued")
    }

    @Test(
        "writes through another handle of the store in this process are yielded, in both modes",
        arguments: [false, true])
    func otherHandle(multiProcess: Bool) async throws {
        let dir = try ScratchDirectory()
        let configuration = Configuration(isMultiProcess: multiProcess)
        let first = try CollectionStore(id: "feed", directory: dir.path, configuration: configuration)
        defer { first.close() }
        let second = try CollectionStore(id: "feed", directory: dir.path, configuration: configuration)
        defer { second.close() }
        let changes = first.bucket("items", of: Item.self).changes()
        let writer = second.bucket("items", of: Item.self)
        try writer.put(Item(n: 1), forKey: "x")
        try writer.remove("x")
        #expect(await Self.take(2, from: changes) == [.put(key: "x"), .remove(key: "x")])
    }

    @Test("bucket names are told apart byte by byte: a canonically equal name is another bucket")
    func exactBucketNames() async throws {
        let dir = try ScratchDirectory()
        let collections = try CollectionStore(id: "feed", directory: dir.path)
        defer { collections.close() }
        let composed = collections.bucket("caf\u{E9}", of: Item.self)
        let decomposed = collections.bucket("cafe\u{301}", of: Item.self)
        let changes = composed.changes()
        try decomposed.put(Item(n: 1), forKey: "k")
        try composed.put(Item(n: 2), forKey: "mine")
        #expect(await Self.take(1, from: changes) == [.put(key: "mine")])
        #expect(changes.feed.waitingCount == 0)
    }

    @Test("a full buffer drops the waiting changes for one overflow resync; later changes follow it")
    func overflow() async throws {
        let dir = try ScratchDirectory()
        let collections = try CollectionStore(id: "feed", directory: dir.path)
        defer { collections.close() }
        let items = collections.bucket("items", of: Item.self)
        let changes = items.changes(bufferLimit: 3)
        for number in 0..<5 { try items.put(Item(n: number), forKey: "k\(number)") }
        // k0..k2 filled the buffer, k3 overflowed it, k4 waits behind the marker.
        #expect(await Self.take(2, from: changes) == [.resync(.overflow), .put(key: "k4")])
        // A limit below 1 is taken as 1.
        let tiny = items.changes(bufferLimit: 0)
        try items.put(Item(n: 9), forKey: "k9")
        try items.put(Item(n: 9), forKey: "k10")
        try items.put(Item(n: 9), forKey: "k11")
        #expect(await Self.take(1, from: tiny) == [.resync(.overflow)])
        #expect(tiny.feed.waitingCount == 0)
    }

    @Test("another process's records become changes of the watched bucket only; a rewrite becomes a resync")
    func externalRecords() {
        let prefix = Array(CollectionKey.prefix(ofBucket: "b").utf8)
        var change = ExternalChange(storeID: "s", kind: .appended(records: 6), sequence: 1, changedKeys: [])
        change.records = [
            .init(key: CollectionKey.encode(bucket: "b", key: "k1"), removes: false),
            .init(key: CollectionKey.encode(bucket: "bb", key: "k1"), removes: false),
            .init(key: BucketCount.key(bucket: "b"), removes: false),
            .init(key: CollectionKey.definitionKey(bucket: "b", name: "n"), removes: false),
            .init(key: CollectionKey.encode(bucket: "b", key: "k1"), removes: true),
            .init(key: CollectionKey.encode(bucket: "b", key: ""), removes: false),
        ]
        #expect(
            Bucket<Item>.bucketChanges(in: change, prefix: prefix) == [
                .put(key: "k1"), .remove(key: "k1"), .put(key: ""),
            ])
        let rewritten = ExternalChange(storeID: "s", kind: .reloaded, sequence: 2, changedKeys: nil)
        #expect(Bucket<Item>.bucketChanges(in: rewritten, prefix: prefix) == [.resync(.storeRewritten)])
        // Keys without records (a change made by hand): the bucket's keys make a resync, others nothing.
        let mine = ExternalChange(
            storeID: "s", kind: .appended(records: 1), sequence: 3,
            changedKeys: [CollectionKey.encode(bucket: "b", key: "x")])
        let theirs = ExternalChange(
            storeID: "s", kind: .appended(records: 1), sequence: 3,
            changedKeys: [CollectionKey.encode(bucket: "c", key: "x")])
        #expect(Bucket<Item>.bucketChanges(in: mine, prefix: prefix) == [.resync(.storeRewritten)])
        #expect(Bucket<Item>.bucketChanges(in: theirs, prefix: prefix).isEmpty)
    }

    @Test("cancelling the reading task ends the stream and releases its subscription")
    func cancellation() async throws {
        let dir = try ScratchDirectory()
        let collections = try CollectionStore(
            id: "feed", directory: dir.path, configuration: Configuration(isMultiProcess: true))
        defer { collections.close() }
        let items = collections.bucket("items", of: Item.self)
        let hub = items.indexes.changeFeeds
        let changes = items.changes()
        weak let feed = changes.feed
        let started = AsyncStream.makeStream(of: Void.self)
        let reader = Task {
            var seen: [BucketChange] = []
            started.continuation.yield()
            for await change in changes { seen.append(change) }
            return seen
        }
        for await _ in started.stream { break }
        reader.cancel()
        #expect(await reader.value.isEmpty)
        #expect(hub.isEmpty, "the stream left the hub")
        try items.put(Item(n: 1), forKey: "late")  // pushed to nobody
        #expect(feed?.waitingCount ?? 0 == 0)

        // A stream released without being read leaves the hub too.
        do { _ = items.changes() }
        #expect(hub.isEmpty)
    }

    @Test("closing the store ends the stream after the changes already waiting")
    func closeEnds() async throws {
        let dir = try ScratchDirectory()
        let collections = try CollectionStore(
            id: "feed", directory: dir.path, configuration: Configuration(isMultiProcess: true))
        let items = collections.bucket("items", of: Item.self)
        let hub = items.indexes.changeFeeds
        let changes = items.changes()
        let reader = Task {
            var seen: [BucketChange] = []
            for await change in changes { seen.append(change) }
            return seen
        }
        try items.put(Item(n: 1), forKey: "a")
        collections.close()
        // The loop ends by itself; the deadline only keeps a failure from hanging the run. It is
        // long because the reader runs on the shared cooperative pool, which other tests' blocking
        // calls can hold for seconds in a loaded parallel run.
        let deadline = Task {
            try await Task.sleep(for: .seconds(60))
            changes.finish()
            Issue.record("the stream did not end when the store closed")
        }
        #expect(await reader.value == [.put(key: "a")])
        deadline.cancel()
        #expect(hub.isEmpty)
        // A stream made on a closed store ends at once.
        var iterator = items.changes().makeAsyncIterator()
        #expect(await iterator.next() == nil)
        #expect(hub.isEmpty)
    }
}
