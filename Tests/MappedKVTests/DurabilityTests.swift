import Foundation
import Glibc
import MappedKVFormat
import Testing

@testable import MappedKV

/// The durability contract's points and levels, seen from the files (docs/FORMAT.md 3.5, 7.3d).
@Suite("Durability")
struct DurabilityTests {
    func checkpoints(_ dir: TemporaryDirectory) throws -> DurabilityCheckpoints.Contents {
        let meta = try #require(fileBytes(dir.file("s.crc")))
        return try #require(meta.withUnsafeBytes { DurabilityCheckpoints.read($0) })
    }

    func stamp(_ dir: TemporaryDirectory) throws -> MetaStamp {
        try MetaInfo(parsing: try #require(fileBytes(dir.file("s.crc")))).stamp
    }

    @Test("a new store is laid out with an empty durability point; sync() and close() move it to the current state")
    func durabilityPoints() throws {
        let dir = TemporaryDirectory("durable")
        let store = try MappedKV(id: "s", directory: dir.path)
        #expect(try checkpoints(dir).durable == .init(actualSize: 0, crcDigest: 0, sequence: 0))
        try store.set("one", forKey: "a")
        #expect(try checkpoints(dir).durable?.actualSize == 0, "a set is no durability point")
        try store.sync()
        let afterSync = try stamp(dir)
        #expect(try checkpoints(dir).durable?.actualSize == afterSync.actualSize)
        #expect(try checkpoints(dir).durable?.crcDigest == afterSync.crcDigest)
        try store.set("two", forKey: "b")
        store.close()
        let afterClose = try stamp(dir)
        #expect(try checkpoints(dir).durable?.actualSize == afterClose.actualSize)
        #expect(afterClose.actualSize > afterSync.actualSize)
        // Every commit is in the ring, newest last.
        #expect(try checkpoints(dir).recent.last?.actualSize == afterClose.actualSize)
    }

    @Test("with Durability.everyWrite every write is the durability point when it returns")
    func everyWrite() throws {
        let dir = TemporaryDirectory("every-write")
        let store = try MappedKV(id: "s", directory: dir.path, configuration: Configuration(durability: .everyWrite))
        for index in 0..<5 {
            try store.set("value-\(index)", forKey: "k\(index)")
            let now = try stamp(dir)
            #expect(try checkpoints(dir).durable?.actualSize == now.actualSize)
        }
        try store.batch { batch in
            try batch.set(1, forKey: "x")
            try batch.set(2, forKey: "y")
        }
        #expect(try checkpoints(dir).durable?.actualSize == (try stamp(dir)).actualSize)
        store.close()
    }

    @Test("with Durability.interval a thread makes the durability point after writes")
    func interval() async throws {
        let dir = TemporaryDirectory("interval")
        let store = try MappedKV(
            id: "s", directory: dir.path, configuration: Configuration(durability: .interval(.milliseconds(5))))
        try store.set("value", forKey: "k")
        let target = try stamp(dir).actualSize
        // Waits for the flusher's observable effect, not for a fixed time.
        var reached = false
        for _ in 0..<2_000 where !reached {
            reached = try checkpoints(dir).durable?.actualSize == target
            if !reached { try await Task.sleep(for: .milliseconds(1)) }
        }
        #expect(reached, "no durability point was made at the interval")
        store.close()
    }

    @Test(
        "a store MMKV wrote gets its checkpoints at the first writable open, after a flush; MMKV's 112 bytes are untouched"
    )
    func checkpointsOnAnMMKVStore() throws {
        let dir = TemporaryDirectory("mmkv-checkpoints")
        try copyGoldenStore("a_plain", to: dir)
        let before = try #require(fileBytes(dir.file("case_a.crc")))
        #expect(before.withUnsafeBytes { DurabilityCheckpoints.read($0) } == nil)
        let store = try MappedKV(id: "case_a", directory: dir.path)
        let after = try #require(fileBytes(dir.file("case_a.crc")))
        #expect(Array(after[0..<112]) == Array(before[0..<112]))
        let contents = try #require(after.withUnsafeBytes { DurabilityCheckpoints.read($0) })
        #expect(contents.durable?.actualSize == (try MetaInfo(parsing: before)).actualSize)
        store.close()
        let readOnly = try MappedKV(id: "case_a", directory: dir.path, configuration: Configuration(isReadOnly: true))
        #expect(try readOnly.count > 0)
        readOnly.close()
    }

    @Test("a failed flush throws from sync(), closes the store and is not retried", arguments: [EIO, ENOSPC])
    func failedFlush(errno code: Int32) throws {
        let dir = TemporaryDirectory("failed-flush")
        let recorder = WriteRecorder()
        WriteRecorder.register(recorder, for: dir.file("s"))
        defer { WriteRecorder.unregister(dir.file("s")) }
        let store = try MappedKV(id: "s", directory: dir.path)
        try store.set("kept", forKey: "a")
        try store.sync()
        try store.set("maybe", forKey: "b")
        recorder.flushFailure.store(code, ordering: .relaxed)
        let error = #expect(throws: MappedKVError.self) { try store.sync() }
        guard case .system(let failure)? = error else {
            Issue.record("expected the flush's system error, got \(String(describing: error))")
            return
        }
        #expect(failure.errno == code)
        // The store is closed: nothing is written on top, and a later sync cannot report success.
        #expect(throws: MappedKVError.self) { try store.set("after", forKey: "c") }
        #expect(throws: MappedKVError.self) { try store.sync() }
        let flushesAfter = recorder.writes.filter { $0 == .sync(.data) || $0 == .sync(.meta) }.count
        store.close()
        #expect(recorder.writes.filter { $0 == .sync(.data) || $0 == .sync(.meta) }.count == flushesAfter)
        recorder.flushFailure.store(0, ordering: .relaxed)
        let reopened = try MappedKV(id: "s", directory: dir.path)
        #expect(try reopened.string(forKey: "a") == "kept")
        reopened.close()
    }

    @Test("a failed flush under Durability.everyWrite fails the write that made it")
    func failedFlushOnEveryWrite() throws {
        let dir = TemporaryDirectory("failed-flush-every")
        let recorder = WriteRecorder()
        WriteRecorder.register(recorder, for: dir.file("s"))
        defer { WriteRecorder.unregister(dir.file("s")) }
        let store = try MappedKV(id: "s", directory: dir.path, configuration: Configuration(durability: .everyWrite))
        try store.set("kept", forKey: "a")
        recorder.flushFailure.store(EIO, ordering: .relaxed)
        #expect(throws: MappedKVError.self) { try store.set("lost", forKey: "b") }
        #expect(throws: MappedKVError.self) { try store.string(forKey: "a") }
        store.close()
    }
}
