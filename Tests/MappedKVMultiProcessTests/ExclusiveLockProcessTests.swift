import Foundation
import MappedKV
import MappedKVProcessTestSupport
import Synchronization
import Testing

// Exclusive sections against real processes: the `mappedkv` binary holds the store's lock
// (`hold --exclusive`) or increments a counter under it (`apply` with `incr-int64`), this test
// process uses the library's try, guard and async forms.

@Suite("Exclusive lock across processes", .serialized)
struct ExclusiveLockProcessTests {
    func open(_ root: String, _ lock: ProcessLock) throws -> MappedKV {
        try MappedKV(id: "s", directory: root, configuration: Configuration(isMultiProcess: true, processLock: lock))
    }

    func storeArguments(_ root: String, _ lock: ProcessLock) -> [String] {
        CLI.store(root, "s") + ["--multi-process", "--lock", lock == .flock ? "flock" : "shared-memory"]
    }

    /// A child holding the store's exclusive lock until released; it sets `released` to `yes` just before.
    func holdExclusively(_ root: String, _ lock: ProcessLock) throws -> HeldStore {
        try HeldStore(storeArguments(root, lock) + ["--exclusive", "--set-on-release", "released", "yes"])
    }

    @Test(
        "tryExclusiveLock and tryLock return nil at once while another process holds the lock; lock waits",
        arguments: [ProcessLock.flock, .sharedMemory])
    func tryFormsAnswerAtOnce(lock: ProcessLock) throws {
        try TemporaryDirectory.with { (tmp) throws -> Void in
            let root = tmp.path("root")
            let store = try open(root, lock)
            try store.set(Int64(1), forKey: "n")
            let holder = try holdExclusively(root, lock)
            #expect(try store.tryExclusiveLock { _ in true } == nil)
            #expect(try canTakeLock(store) == false)
            // lock() on another thread waits for the child, and then sees its last write.
            let seen = Mutex<String?>(nil)
            let done = DispatchSemaphore(value: 0)
            Thread {
                defer { done.signal() }
                guard let held = try? store.lock() else { return }
                seen.withLock { $0 = (try? store.string(forKey: "released")) ?? "<none>" }
                held.unlock()
            }.start()
            #expect(holder.release() == 0)
            #expect(done.wait(timeout: .now() + 60) == .success)
            #expect(seen.withLock { $0 } == "yes", "lock() returned only after the child's last write")
            #expect(try canTakeLock(store))
            #expect(try store.tryExclusiveLock { tx in try tx.int64(forKey: "n") } == 1)
        }
    }

    @Test(
        "waiters in the async form leave the cooperative threads free, and run once the other process releases",
        .timeLimit(.minutes(2)), arguments: [ProcessLock.flock, .sharedMemory])
    func asyncFormDoesNotBlockThreads(lock: ProcessLock) async throws {
        let tmp = try TemporaryDirectory()
        defer { tmp.remove() }
        let root = tmp.path("root")
        let store = try open(root, lock)
        let holder = try holdExclusively(root, lock)
        // More waiters than the cooperative pool has threads (one per core): if waiting blocked a
        // thread, the later ones could never start and this test would hang until its time limit.
        let waiterCount = 2 * ProcessInfo.processInfo.activeProcessorCount + 2
        let started = StartCount()
        var waiters: [Task<String?, any Error>] = []
        for _ in 0..<waiterCount {
            waiters.append(
                Task {
                    started.increment()
                    return try await store.withExclusiveLock { tx in try tx.string(forKey: "released") }
                })
        }
        while started.value < waiterCount { await Task.yield() }
        // Another task still gets a thread, and a cancelled waiter stops waiting.
        #expect(await Task { "free" }.value == "free")
        let cancelled = Task { try await store.withExclusiveLock { _ in "ran" } }
        cancelled.cancel()
        await #expect(throws: CancellationError.self) { try await cancelled.value }
        #expect(try store.tryExclusiveLock { _ in true } == nil, "the child still holds the lock")
        #expect(holder.release() == 0)
        for waiter in waiters { #expect(try await waiter.value == "yes") }
    }

    @Test(
        "a counter incremented under the guard here and under the lock by 3 child processes ends at the exact total",
        arguments: [ProcessLock.flock, .sharedMemory])
    func guardCounterWithChildren(lock: ProcessLock) throws {
        try TemporaryDirectory.with { (tmp) throws -> Void in
            let root = tmp.path("root")
            let store = try open(root, lock)
            let perProcess = 150
            let script = String(repeating: "incr-int64 n 1\n", count: perProcess)
            let results = Mutex<[CLIResult]>([])
            let errors = Mutex<[MappedKVError]>([])
            let group = DispatchGroup()
            for _ in 0..<3 {
                group.enter()
                Thread {
                    defer { group.leave() }
                    let result = try? CLI.run(["apply", "--create"] + storeArguments(root, lock), stdin: script)
                    results.withLock { if let result { $0.append(result) } }
                }.start()
            }
            group.enter()
            Thread {
                defer { group.leave() }
                do throws(MappedKVError) {
                    for _ in 0..<perProcess {
                        let held = try store.lock()
                        let n = try store.int64(forKey: "n") ?? 0
                        try store.set(n + 1, forKey: "n")
                        held.unlock()
                    }
                } catch {
                    errors.withLock { $0.append(error) }
                }
            }.start()
            #expect(group.wait(timeout: .now() + 300) == .success)
            #expect(errors.withLock { $0 } == [])
            #expect(results.withLock { $0.count } == 3)
            for result in results.withLock({ $0 }) { #expect(result.succeeded, "\(result)") }
            #expect(try store.int64(forKey: "n") == Int64(4 * perProcess))
        }
    }
}

/// How many tasks have started.
private final class StartCount: Sendable {
    private let count = Atomic<Int>(0)
    var value: Int { count.load(ordering: .relaxed) }
    func increment() { count.add(1, ordering: .relaxed) }
}

/// Whether the calling thread can take the store's lock right now (it releases it at once).
private func canTakeLock(_ store: MappedKV) throws -> Bool {
    guard let held = try store.tryLock() else { return false }
    held.unlock()
    return true
}
