import Foundation
import MappedKV
import MappedKVProcessTestSupport
import Synchronization
import Testing

/// Multi-process mode with real processes: the `mappedkv` binary as the other process, this test
/// process holding a store through the library.
@Suite("Multi-process", .serialized)
struct MultiProcessTests {
    static let key = CryptKey(Array("mp-key".utf8))!

    func open(
        _ root: String, multiProcess: Bool = true, readOnly: Bool = false, key: CryptKey? = nil,
        lock: ProcessLock = .flock
    ) throws -> MappedKV {
        try MappedKV(
            id: "s", directory: root,
            configuration: Configuration(
                isReadOnly: readOnly, isMultiProcess: multiProcess, cryptKey: key, processLock: lock))
    }

    func storeArguments(
        _ root: String, multiProcess: Bool = true, key: Bool = false, lock: ProcessLock = .flock
    ) -> [String] {
        CLI.store(root, "s") + (multiProcess ? ["--multi-process"] : []) + (key ? ["--crypt-key", "mp-key"] : [])
            + (lock == .sharedMemory ? ["--lock", "shared-memory"] : [])
    }

    // MARK: Mode conflicts

    @Test("a store held in single-process mode cannot be opened by another process in any mode")
    func singleProcessHolderExcludesEveryone() throws {
        try TemporaryDirectory.with { (tmp) throws -> Void in
            let root = tmp.path("root")
            try CLI.succeed(["set", "--create"] + storeArguments(root, multiProcess: false) + ["k", "v"])
            let holder = try HeldStore(storeArguments(root, multiProcess: false))
            defer { holder.release() }
            for (multiProcess, readOnly) in [(true, false), (false, false), (true, true), (false, true)] {
                #expect {
                    _ = try open(root, multiProcess: multiProcess, readOnly: readOnly)
                } throws: { error in
                    guard case MappedKVError.modeConflict(let id, let detail) = error else { return false }
                    // The message names the holder's mode, its pid, and the flag that shares a store.
                    return id == "s" && detail.contains("in single-process mode")
                        && detail.contains("pid \(holder.process.processIdentifier)")
                        && detail.contains("--multi-process")
                }
            }
            let result = try CLI.fail(["get"] + storeArguments(root) + ["k"])
            #expect(result.stderr.contains("cannot be opened in this mode"), "\(result)")
            #expect(holder.release() == 0)
            // Once the holder is gone, the store opens in either mode and is intact.
            #expect(try open(root).string(forKey: "k") == "v")
        }
    }

    @Test("a store shared in multi-process mode cannot be opened by another process in single-process mode")
    func multiProcessHolderExcludesSingleProcessWriters() throws {
        try TemporaryDirectory.with { (tmp) throws -> Void in
            let root = tmp.path("root")
            let holder = try HeldStore(storeArguments(root))
            defer { holder.release() }
            #expect {
                _ = try open(root, multiProcess: false)
            } throws: { error in
                guard case MappedKVError.modeConflict(_, let detail) = error else { return false }
                return detail.contains("in multi-process mode") && detail.contains("--multi-process")
                    && detail.contains("pid \(holder.process.processIdentifier)")
            }
            let result = try CLI.fail(["set", "--create"] + storeArguments(root, multiProcess: false) + ["k", "v"])
            #expect(result.stderr.contains("cannot be opened in this mode"), "\(result)")
            #expect(result.stderr.contains("--multi-process"), "\(result)")
            // Multi-process and read-only opens share it.
            let shared = try open(root)
            try shared.set("v", forKey: "k")
            let read = try CLI.succeed(["get"] + storeArguments(root, multiProcess: false) + ["--type", "string", "k"])
            #expect(read.stdout == "v\n")
        }
    }

    @Test("one process shares one instance per store; a different mode or key is refused")
    func inProcessSharing() throws {
        try TemporaryDirectory.with { (tmp) throws -> Void in
            let root = tmp.path("root")
            let first = try open(root)
            let second = try open(root)
            try first.set(Int32(7), forKey: "n")
            #expect(try second.int32(forKey: "n") == 7)
            #expect(throws: MappedKVError.self) { _ = try open(root, multiProcess: false) }
            #expect(throws: MappedKVError.self) { _ = try open(root, key: Self.key) }
            first.close()
            #expect(throws: MappedKVError.self) { try first.int32(forKey: "n") }
            #expect(try second.int32(forKey: "n") == 7, "closing one handle leaves the other working")
            second.close()
            // With every handle closed, the files are released: another process can take them over.
            try CLI.succeed(
                ["set", "--create"] + storeArguments(root, multiProcess: false) + ["--type", "int32", "n", "8"])
        }
    }

    // MARK: Seeing other processes' writes

    @Test("appends and rewrites by other processes are seen and reported", arguments: [false, true])
    func changesByOtherProcesses(encrypted: Bool) async throws {
        try await withTemporaryDirectory { tmp in
            let root = tmp.path("root")
            let key = encrypted ? Self.key : nil
            let store = try open(root, key: key)
            try store.set("mine", forKey: "own")
            // Changes are pushed to subscribers by the watcher, or by whichever access notices them first.
            let log = ChangeLog()
            let observation = store.observeExternalChanges(log.record)
            defer { observation.cancel() }
            let (streamed, task) = consume(store.externalChanges())
            defer { task.cancel() }
            #expect(try store.checkForChanges() == false)

            try CLI.succeed(["set", "--create"] + storeArguments(root, key: encrypted) + ["k", "from-child"])
            #expect(try store.string(forKey: "k") == "from-child", "a read catches up with an append")
            #expect(await log.wait { $0.changes.count == 1 })
            #expect(log.changes.map(\.kind) == [.appended(records: 1)])

            try CLI.succeed(["remove"] + storeArguments(root, key: encrypted) + ["own"])
            _ = try store.checkForChanges()
            #expect(try store.contains("own") == false)
            #expect(await log.wait { $0.changes.count == 2 })
            #expect(log.changes.map(\.kind) == [.appended(records: 1), .appended(records: 1)])

            // A write-back in the child (trim after growth) changes the sequence: full reload.
            let big = String(repeating: "x", count: 3000)
            let script =
                (0..<8).map { "set-string big\($0) \(big)" }.joined(separator: "\n")
                + "\n" + (0..<8).map { "remove big\($0)" }.joined(separator: "\n") + "\ntrim\n"
            try CLI.succeed(["apply", "--create"] + storeArguments(root, key: encrypted), stdin: script)
            #expect(try store.allKeys == ["k"])
            #expect(try store.string(forKey: "k") == "from-child")
            #expect(await log.wait { $0.changes.last?.kind == .reloaded }, "\(log.changes)")
            #expect(try store.totalSize == 4096, "the shrunk file is remapped at its new size")

            // This process keeps writing correctly on top of the reloaded state.
            try store.set("after", forKey: "mine2")
            #expect(
                try CLI.succeed(["get"] + storeArguments(root, key: encrypted) + ["--type", "string", "mine2"]).stdout
                    == "after\n")

            #expect(
                await streamed.wait(upTo: Self.streamDeadline) { $0.changes == log.changes },
                "the stream sees what the handler sees")
        }
    }

    @Test("a read-only multi-process instance follows a writer")
    func readOnlyFollower() throws {
        try TemporaryDirectory.with { (tmp) throws -> Void in
            let root = tmp.path("root")
            try CLI.succeed(["set", "--create"] + storeArguments(root) + ["a", "1"])
            let reader = try open(root, readOnly: true)
            #expect(try reader.string(forKey: "a") == "1")
            try CLI.succeed(["set", "--create"] + storeArguments(root) + ["b", "2"])
            try CLI.succeed(["apply", "--create"] + storeArguments(root), stdin: "clear\nset-string c 3\n")
            #expect(try reader.allKeys == ["c"])
            #expect(throws: MappedKVError.readOnly(id: "s")) { try reader.set("x", forKey: "y") }
        }
    }

    // MARK: Locks

    @Test("tryExclusiveLock fails while another process holds the lock; withExclusiveLock waits for it")
    func exclusiveLockAcrossProcesses() throws {
        try TemporaryDirectory.with { (tmp) throws -> Void in
            let root = tmp.path("root")
            let store = try open(root)
            try store.set(Int64(1), forKey: "n")
            let holder = try HeldStore(storeArguments(root) + ["--exclusive", "--set-on-release", "released", "yes"])
            #expect(try store.tryExclusiveLock { _ in true } == nil, "the lock is held by the child")
            // withExclusiveLock on another thread blocks on the child's lock: its flock on the meta
            // file shows as waiting in /proc/locks, and its body has not run. Then the child goes,
            // and the body runs after the child's last write under its lock.
            let seen = Mutex<String?>(nil)
            let done = DispatchSemaphore(value: 0)
            let waiter = Thread {
                let value = try? store.withExclusiveLock { tx in try tx.string(forKey: "released") }
                seen.withLock { $0 = value ?? "<none>" }
                done.signal()
            }
            waiter.start()
            #expect(waitUntilWaitingForFlock(on: root + "/s.crc"), "withExclusiveLock never waited for the lock")
            #expect(seen.withLock { $0 } == nil, "the body ran while the child held the lock")
            #expect(holder.release() == 0)
            done.wait()
            #expect(seen.withLock { $0 } == "yes")
            #expect(try store.tryExclusiveLock { tx in try tx.int64(forKey: "n") } == 1)
        }
    }

    @Test("increments under withExclusiveLock from 4 processes at once are never lost")
    func concurrentIncrements() throws {
        try TemporaryDirectory.with { (tmp) throws -> Void in
            let root = tmp.path("root")
            let script = String(repeating: "incr-int64 n 1\n", count: 150)
            let results = Mutex<[CLIResult]>([])
            let group = DispatchGroup()
            let arguments = ["apply", "--create"] + storeArguments(root)
            for _ in 0..<4 {
                group.enter()
                Thread {
                    let result = try? CLI.run(arguments, stdin: script)
                    results.withLock { if let result { $0.append(result) } }
                    group.leave()
                }.start()
            }
            group.wait()
            #expect(results.withLock { $0.count } == 4)
            for result in results.withLock({ $0 }) { #expect(result.succeeded, "\(result)") }
            #expect(try open(root).int64(forKey: "n") == 600)
        }
    }
}
