import Foundation
import MappedKV
import MappedKVProcessTestSupport
import Synchronization
import Testing

/// Pushed change notifications with real processes: this process subscribes and never touches the
/// store while it waits; the `mappedkv` binary is the other process. Part of the serialized
/// multi-process suite, because the watcher count is process-wide.
extension MultiProcessTests {
    /// The changes one subscription received, with when each arrived, and whether it ended.
    final class ChangeLog: Sendable {
        private struct State {
            var changes: [(change: ExternalChange, arrival: ContinuousClock.Instant)] = []
            var ended = false
        }
        private let state = Mutex(State())

        func record(_ change: ExternalChange) {
            state.withLock { $0.changes.append((change, .now)) }
        }

        func end() {
            state.withLock { $0.ended = true }
        }

        var changes: [ExternalChange] { state.withLock { $0.changes.map(\.change) } }
        var ended: Bool { state.withLock { $0.ended } }
        /// Every key reported so far; nil once a change said everything may have changed.
        var changedKeys: Set<String>? {
            changes.reduce(Set<String>()) { keys, change in
                guard let keys, let changed = change.changedKeys else { return nil }
                return keys.union(changed)
            }
        }

        /// When the first change for which `matches` holds arrived.
        func arrival(of matches: (ExternalChange) -> Bool) -> ContinuousClock.Instant? {
            state.withLock { $0.changes.first { matches($0.change) }?.arrival }
        }

        /// Waits until `done` holds or `deadline` has passed; returns whether it held. It waits
        /// asynchronously, leaving its thread to the tasks that consume streams.
        func wait(upTo deadline: Duration = .seconds(2), until done: (ChangeLog) -> Bool) async -> Bool {
            let end = ContinuousClock.now + deadline
            while !done(self) {
                guard ContinuousClock.now < end else { return false }
                try? await Task.sleep(for: .milliseconds(1))
            }
            return true
        }
    }

    /// How long a stream's consumer may take to receive a change.
    static let streamDeadline = Duration.seconds(10)

    /// The thread stream consumers run on: not the cooperative pool, which tests running in
    /// parallel keep busy for tens of seconds at a time.
    static let consumerExecutor = ThreadExecutor(name: "stream consumer")

    /// Consumes `stream` into a log on a task of its own, noting when the sequence ends.
    func consume(_ stream: AsyncStream<ExternalChange>) -> (ChangeLog, Task<Void, Never>) {
        let log = ChangeLog()
        let task = Task(executorPreference: Self.consumerExecutor) {
            for await change in stream { log.record(change) }
            log.end()
        }
        return (log, task)
    }

    /// Waits up to `deadline` for the watcher threads of `store`'s files to number `expected`
    /// (counted per store: other tests' watchers in this process do not disturb the count).
    func watchersReach(_ expected: Int, of store: MappedKV, upTo deadline: Duration = .seconds(2)) async -> Bool {
        let end = ContinuousClock.now + deadline
        while store.changeWatcherThreads != expected {
            guard ContinuousClock.now < end else { return false }
            try? await Task.sleep(for: .milliseconds(1))
        }
        return true
    }

    @Test(
        "another process's sets and removes are pushed with their keys, without touching the store",
        arguments: [false, true], [ProcessLock.flock, .sharedMemory])
    func pushedAppendsCarryKeys(encrypted: Bool, lock: ProcessLock) async throws {
        try await withTemporaryDirectory { tmp in
            let root = tmp.path("root")
            let store = try open(root, key: encrypted ? Self.key : nil, lock: lock)
            try store.set("mine", forKey: "own")
            let callbacks = ChangeLog()
            let observation = store.observeExternalChanges(callbacks.record)
            defer { observation.cancel() }
            let (streamed, task) = consume(store.externalChanges())
            defer { task.cancel() }

            try CLI.succeed(["set", "--create"] + storeArguments(root, key: encrypted, lock: lock) + ["k1", "v1"])
            #expect(await callbacks.wait { $0.changedKeys?.contains("k1") == true }, "\(callbacks.changes)")
            #expect(
                await streamed.wait(upTo: Self.streamDeadline) { $0.changedKeys?.contains("k1") == true },
                "\(streamed.changes)")
            #expect(callbacks.changes.map(\.kind) == [.appended(records: 1)])
            #expect(callbacks.changes.first?.changedKeys == ["k1"])

            try CLI.succeed(["remove"] + storeArguments(root, key: encrypted, lock: lock) + ["own"])
            #expect(await callbacks.wait { $0.changedKeys?.contains("own") == true }, "\(callbacks.changes)")
            try CLI.succeed(
                ["apply", "--create"] + storeArguments(root, key: encrypted, lock: lock),
                stdin: "set-string a 1\nset-int32 b 2\nremove k1\n")
            #expect(
                await callbacks.wait { $0.changedKeys?.isSuperset(of: ["a", "b"]) == true }, "\(callbacks.changes)")
            #expect(callbacks.changedKeys == ["k1", "own", "a", "b"], "no key is reported that was not written")
            #expect(
                await streamed.wait(upTo: Self.streamDeadline) { $0.changedKeys == ["k1", "own", "a", "b"] },
                "\(streamed.changes)")

            // A writer already running: from the moment it is told to write until the change arrives.
            let holder = try HeldStore(
                storeArguments(root, key: encrypted, lock: lock) + ["--set-on-release", "held", "1"])
            let told = ContinuousClock.now
            #expect(holder.release() == 0)
            #expect(await callbacks.wait { $0.changedKeys?.contains("held") == true }, "\(callbacks.changes)")
            if let arrival = callbacks.arrival(of: { $0.changedKeys?.contains("held") == true }) {
                // Recorded, not asserted: the deadline above is the test; this shows the margin.
                print("pushed change arrived \(arrival - told) after the writer was told to write")
            }
            #expect(callbacks.changedKeys == ["k1", "own", "a", "b", "held"])
            // The store caught up while nobody touched it.
            #expect(try store.allKeys == ["a", "b", "held"])
        }
    }

    @Test("a clear or a compaction by another process says everything may have changed")
    func reloadsReportEverything() async throws {
        try await withTemporaryDirectory { tmp in
            let root = tmp.path("root")
            let store = try open(root)
            try store.set("mine", forKey: "own")
            let log = ChangeLog()
            let observation = store.observeExternalChanges(log.record)
            defer { observation.cancel() }

            try CLI.succeed(["apply", "--create"] + storeArguments(root), stdin: "clear\n")
            #expect(await log.wait { $0.changes.contains { $0.kind == .reloaded } }, "\(log.changes)")
            let cleared = log.changes.first { $0.kind == .reloaded }
            #expect(cleared?.changedKeys == nil)
            #expect(cleared?.mayHaveChanged("own") == true)

            // Growth then a trim: a write-back with a new sequence.
            let count = log.changes.count
            let big = String(repeating: "x", count: 3000)
            let script =
                (0..<8).map { "set-string big\($0) \(big)" }.joined(separator: "\n")
                + "\n" + (0..<8).map { "remove big\($0)" }.joined(separator: "\n") + "\ntrim\nset-string last 1\n"
            try CLI.succeed(["apply", "--create"] + storeArguments(root), stdin: script)
            #expect(await log.wait { $0.changes.last?.mayHaveChanged("last") == true && $0.changes.count > count })
            let afterTrim = log.changes.dropFirst(count)
            #expect(afterTrim.contains { $0.kind == .reloaded && $0.changedKeys == nil }, "\(afterTrim)")
            #expect(try store.allKeys == ["last"])
        }
    }

    @Test("cancelling, releasing or dropping a subscription stops delivery and the watcher")
    func endingSubscriptionsStopsTheWatcher() async throws {
        try await withTemporaryDirectory { tmp in
            let root = tmp.path("root")
            let store = try open(root)
            try store.set("mine", forKey: "own")
            #expect(store.changeWatcherThreads == 0, "an open store without subscribers has no watcher")

            let cancelled = ChangeLog()
            let observation = store.observeExternalChanges(cancelled.record)
            var released: ExternalChangeObservation? = store.observeExternalChanges { _ in }
            let (streamed, task) = consume(store.externalChanges())
            #expect(store.changeWatcherThreads == 1, "one watcher per store, however many subscribe")
            _ = released

            observation.cancel()
            released = nil
            #expect(store.changeWatcherThreads == 1, "the stream still subscribes")
            try CLI.succeed(["set", "--create"] + storeArguments(root) + ["k1", "v1"])
            #expect(await streamed.wait(upTo: Self.streamDeadline) { $0.changes.count == 1 })

            task.cancel()
            #expect(await streamed.wait(upTo: Self.streamDeadline) { $0.ended })
            #expect(await watchersReach(0, of: store), "the last subscription's end stops the watcher")

            // A stream dropped without being consumed ends its subscription too.
            var dropped: AsyncStream<ExternalChange>? = store.externalChanges()
            #expect(store.changeWatcherThreads == 1)
            _ = dropped
            dropped = nil
            #expect(await watchersReach(0, of: store))

            try CLI.succeed(["set", "--create"] + storeArguments(root) + ["k2", "v2"])
            #expect(try store.checkForChanges(), "the change is there to be noticed")
            #expect(cancelled.changes.isEmpty, "nothing is delivered to a cancelled subscription")
            #expect(streamed.changes.count == 1)
        }
    }

    @Test("closing the handle ends its subscriptions and finishes its streams")
    func closingTheHandleEndsSubscriptions() async throws {
        try await withTemporaryDirectory { tmp in
            let root = tmp.path("root")
            let keeper = try open(root)
            let store = try open(root)
            let (streamed, task) = consume(store.externalChanges())
            defer { task.cancel() }
            let log = ChangeLog()
            let observation = keeper.observeExternalChanges(log.record)
            defer { observation.cancel() }
            store.close()
            #expect(
                await streamed.wait(upTo: Self.streamDeadline) { $0.ended },
                "the stream finishes when its handle closes")
            #expect(store.changeWatcherThreads == 1, "the other handle's subscription still watches")
            try CLI.succeed(["set", "--create"] + storeArguments(root) + ["k", "v"])
            #expect(await log.wait { $0.changes.count == 1 })
            observation.cancel()
            #expect(await watchersReach(0, of: store))
        }
    }

    @Test("this process's own writes, through any handle, are never reported")
    func ownWritesAreNotReported() async throws {
        try await withTemporaryDirectory { tmp in
            let root = tmp.path("root")
            let store = try open(root)
            let other = try open(root)
            let log = ChangeLog()
            let observation = store.observeExternalChanges(log.record)
            defer { observation.cancel() }
            let big = String(repeating: "y", count: 2000)
            for round in 0..<20 { try store.set(big, forKey: "big\(round % 4)") }  // grows and compacts
            try other.set("x", forKey: "through-another-handle")
            try store.clearAll()
            try other.set(Int32(1), forKey: "n")
            try store.trim()
            // A marker from another process: once it arrives, anything reported before it has too.
            try CLI.succeed(["set", "--create"] + storeArguments(root) + ["marker", "1"])
            #expect(await log.wait { $0.changes.contains { $0.changedKeys?.contains("marker") == true } })
            #expect(log.changes.count == 1, "\(log.changes)")
            #expect(log.changes.first?.changedKeys == ["marker"])
        }
    }

    @Test("a subscription on a single-process store starts no watcher and hears nothing")
    func singleProcessSubscription() async throws {
        try await withTemporaryDirectory { tmp in
            let store = try open(tmp.path("root"), multiProcess: false)
            let log = ChangeLog()
            let observation = store.observeExternalChanges(log.record)
            #expect(store.changeWatcherThreads == 0)
            try store.set("v", forKey: "k")
            #expect(try store.checkForChanges() == false)
            observation.cancel()
            #expect(log.changes.isEmpty)
        }
    }
}
