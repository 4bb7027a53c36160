import Foundation
import Synchronization
import Testing

@testable import MappedKV

// Exclusive sections within one process: calls on the store from inside a section are served,
// sections nest, errors pass through, other threads wait, and the guard and async forms keep the
// same rules. The cross-process side is in MappedKVMultiProcessTests/ExclusiveLockProcessTests.swift.

/// A type that is not `Sendable`, to return from a section.
final class NonSendableBox {
    var values: [String] = []
}

/// An error of the caller's own.
struct OutOfStock: Error, Equatable {
    var item: String
}

@Suite("Exclusive sections")
struct ExclusiveSectionTests {
    func open(_ dir: TemporaryDirectory, clock: ExpiryClock = .system) throws -> MappedKV {
        try MappedKV(id: "s", directory: dir.path, configuration: Configuration(clock: clock))
    }

    @Test("calls on the store itself and on a second handle are served inside withExclusiveLock")
    func reentrantCallsAreServed() throws {
        let dir = TemporaryDirectory("excl-reentrant")
        let store = try open(dir)
        let other = try open(dir)
        try store.set(Int64(41), forKey: "n")
        let seen = try store.withExclusiveLock { tx in
            let n = try store.int64(forKey: "n") ?? 0
            try store.set(n + 1, forKey: "n")
            try other.set("yes", forKey: "other")
            #expect(try tx.string(forKey: "other") == "yes")
            try store.trim()
            return try tx.int64(forKey: "n")
        }
        #expect(seen == 42)
        #expect(try other.int64(forKey: "n") == 42)
    }

    @Test("withExclusiveLock and tryExclusiveLock nest inside a section on the same thread")
    func sectionsNest() throws {
        let dir = TemporaryDirectory("excl-nest")
        let store = try open(dir)
        let depth = try store.withExclusiveLock { outer in
            try outer.set(Int32(1), forKey: "outer")
            let inner = try store.withExclusiveLock { inner in
                try inner.set(Int32(2), forKey: "inner")
                let innermost = try store.tryExclusiveLock { (tx) throws(MappedKVError) -> Int in
                    try tx.count
                }
                return try #require(innermost)
            }
            // The outer transaction is still usable after the inner one ended.
            #expect(try outer.int32(forKey: "inner") == 2)
            return inner
        }
        #expect(depth == 2)
        // The section is over: another thread takes the lock without waiting.
        #expect(Thread.detachAndJoin { canTakeLock(store) })
    }

    @Test("a transaction kept past its section stays ended, however many sections follow")
    func keptTransactionStaysEnded() throws {
        let dir = TemporaryDirectory("excl-kept")
        let store = try open(dir)
        var kept: MappedKV.Transaction?
        try store.withExclusiveLock { tx in
            kept = tx
            try tx.set(Int32(1), forKey: "a")
        }
        for round in 0..<3 {
            // Each later section gets a transaction that works, and never the one kept above.
            try store.withExclusiveLock { tx in
                #expect(tx !== kept)
                try tx.set(Int32(round), forKey: "b")
            }
            #expect {
                try kept?.set(Int32(9), forKey: "a")
            } throws: { error in
                guard case MappedKVError.closed = error else { return false }
                return true
            }
        }
        #expect(try store.int32(forKey: "a") == 1 && store.int32(forKey: "b") == 2)
        // A section's transaction that nothing kept serves the next section again, ended in between.
        var first: ObjectIdentifier?
        try store.withExclusiveLock { tx in first = ObjectIdentifier(tx) }
        try store.withExclusiveLock { tx in #expect(ObjectIdentifier(tx) == first) }
    }

    @Test("an error of the body's own reaches the caller unchanged")
    func bodyErrorPassesThrough() throws {
        let dir = TemporaryDirectory("excl-error")
        let store = try open(dir)
        try store.set(Int32(0), forKey: "stock")
        #expect(throws: OutOfStock(item: "tea")) {
            try store.withExclusiveLock { tx in
                let left = try tx.int32(forKey: "stock") ?? 0
                if left == 0 { throw OutOfStock(item: "tea") }
                try tx.set(left - 1, forKey: "stock")
            }
        }
        #expect(throws: OutOfStock(item: "cake")) {
            _ = try store.tryExclusiveLock { _ in throw OutOfStock(item: "cake") }
        }
        // The lock was released despite the error.
        #expect(try store.tryExclusiveLock { _ in 1 } == 1)
    }

    @Test("a store error, from the transaction or from taking the lock, is a MappedKVError")
    func storeErrorsAreMappedKVErrors() throws {
        let dir = TemporaryDirectory("excl-store-errors")
        let store = try open(dir)
        // A typed body is accepted as it is.
        #expect(throws: MappedKVError.invalidKey("key is empty")) {
            try store.withExclusiveLock { (tx) throws(MappedKVError) -> Int in
                try tx.set(Int32(1), forKey: "")
                return 1
            }
        }
        store.close()
        #expect {
            _ = try store.tryExclusiveLock { _ in 1 }
        } throws: { error in
            guard case MappedKVError.closed = error else { return false }
            return true
        }
    }

    @Test("the result need not be Sendable")
    func nonSendableResult() throws {
        let dir = TemporaryDirectory("excl-nonsendable")
        let store = try open(dir)
        try store.set("a", forKey: "1")
        try store.set("b", forKey: "2")
        let box = try store.withExclusiveLock { (tx) throws(MappedKVError) -> NonSendableBox in
            let box = NonSendableBox()
            for key in try tx.allKeys { box.values.append(try tx.string(forKey: key) ?? "") }
            return box
        }
        #expect(box.values == ["a", "b"])
    }

    @Test("a transaction sets a value with an expiry, and has every read of the store")
    func transactionExpiryAndReads() throws {
        let dir = TemporaryDirectory("excl-expiry")
        let clock = ManualClock(1_700_000_000)
        let store = try open(dir, clock: clock.expiryClock)
        try store.enableKeyExpiry()
        try store.withExclusiveLock { tx in
            try tx.set("soon", forKey: "short", expiresAfter: .seconds(10))
            try tx.set("later", forKey: "long", expiresAfter: .seconds(100))
            try tx.set(Data([1, 2, 3]), forKey: "data")
            #expect(try tx.count == 3)
            #expect(try tx.allKeys == ["data", "long", "short"])
            #expect(try tx.contains("short"))
            #expect(try tx.data(forKey: "data") == Data([1, 2, 3]))
            #expect(try tx.payload(forKey: "short") == [4] + Array("soon".utf8))
            #expect(try tx.valueSize(forKey: "short") == 4)
            #expect(try tx.entries().map(\.key) == ["data", "long", "short"])
        }
        clock.advance(11)
        #expect(try store.string(forKey: "short") == nil)
        #expect(try store.string(forKey: "long") == "later")
        try store.withExclusiveLock { tx in
            #expect(try tx.contains("short") == false)
            try tx.removeValue(forKey: "data")
            #expect(try tx.allKeys == ["long"])
            try tx.clearAll()
            #expect(try tx.count == 0)
        }
    }

    @Test("forEachEntry's body may call the store, and walks the entries as they were")
    func forEachEntryBodyMayCallTheStore() throws {
        let dir = TemporaryDirectory("excl-foreach")
        let store = try open(dir)
        for i in 0..<20 { try store.set(Int32(i), forKey: "k\(i)") }
        var seen: [String: Int32] = [:]
        try store.withExclusiveLock { tx in
            try tx.forEachEntry { key, payload in
                seen[key] = try Int32(payload: payload)
                try store.removeValue(forKey: key)
                try tx.set(Int32(-1), forKey: "copy-" + key)
            }
        }
        #expect(seen.count == 20 && seen["k7"] == 7)
        #expect(try store.count == 20)
        #expect(try store.allKeys.allSatisfy { $0.hasPrefix("copy-") })
    }

    @Test("the guard holds the lock across calls; other threads wait, then take it")
    func guardAcrossCalls() throws {
        let dir = TemporaryDirectory("excl-guard")
        let store = try open(dir)
        let held = try store.lock()
        try store.set(Int32(1), forKey: "a")
        try store.set(Int32(2), forKey: "b")
        let nested = try store.lock()  // nests on this thread
        #expect(try store.int32(forKey: "a") == 1)
        nested.unlock()
        // Another thread cannot take it meanwhile.
        #expect(Thread.detachAndJoin { canTakeLock(store) } == false)
        // And a call of another thread waits until the guard is released: the thread is seen
        // blocked (in the futex wait of the section's gate) without having written.
        let done = DispatchSemaphore(value: 0)
        let writerThread = Mutex<String?>(nil)
        let writer = Thread {
            writerThread.withLock { $0 = currentThreadProcFolder() }
            try? store.set(Int32(3), forKey: "a")
            done.signal()
        }
        writer.start()
        #expect(waitUntilBlockedInFutex { writerThread.withLock { $0 } }, "the other thread's set never waited")
        #expect(done.wait(timeout: .now()) == .timedOut, "the other thread's set returned while the guard was held")
        #expect(try store.int32(forKey: "a") == 1)
        held.unlock()
        #expect(done.wait(timeout: .now() + 60) == .success)
        #expect(try store.int32(forKey: "a") == 3)
        #expect(Thread.detachAndJoin { canTakeLock(store) })
    }

    @Test("read-modify-writes under the guard from 4 threads lose no increment")
    func guardIncrementsFromThreads() throws {
        let dir = TemporaryDirectory("excl-threads")
        let store = try open(dir)
        let second = try open(dir)
        let group = DispatchGroup()
        let errors = Mutex<[MappedKVError]>([])
        for thread in 0..<4 {
            group.enter()
            Thread {
                defer { group.leave() }
                let handle = thread.isMultiple(of: 2) ? store : second
                do throws(MappedKVError) {
                    for _ in 0..<250 {
                        let held = try handle.lock()
                        let n = try handle.int64(forKey: "n") ?? 0
                        try handle.set(n + 1, forKey: "n")
                        held.unlock()
                    }
                } catch {
                    errors.withLock { $0.append(error) }
                }
            }.start()
        }
        #expect(group.wait(timeout: .now() + 120) == .success)
        #expect(errors.withLock { $0 } == [])
        #expect(try store.int64(forKey: "n") == 1000)
    }

    @Test("the async form runs the body holding the lock and returns a non-Sendable result")
    func asyncForm() async throws {
        let dir = TemporaryDirectory("excl-async")
        let store = try open(dir)
        let box = try await store.withExclusiveLock { tx in
            try tx.set(Int64(5), forKey: "total")
            try store.set(Int64(6), forKey: "served")  // the store itself, from the body
            let box = NonSendableBox()
            box.values = try tx.allKeys
            return box
        }
        #expect(box.values == ["served", "total"])
        await #expect(throws: OutOfStock(item: "x")) {
            try await store.withExclusiveLock { _ in throw OutOfStock(item: "x") }
        }
    }

    // The limit only guards against a hang: on a 2-core machine the test shares Swift's two
    // cooperative threads with long synchronous suites and can wait minutes to be scheduled.
    @Test("a task waiting in the async form is cancelled with CancellationError", .timeLimit(.minutes(5)))
    func asyncFormCancellation() async throws {
        let dir = TemporaryDirectory("excl-cancel")
        let store = try open(dir)
        let holder = LockHolder(store)
        let waiter = Task { try await store.withExclusiveLock { _ in "ran" } }
        waiter.cancel()
        await #expect(throws: CancellationError.self) { try await waiter.value }
        holder.release()
        #expect(try await store.withExclusiveLock { _ in "ran" } == "ran")
    }
}

/// Holds a store's guard on a thread of its own until released.
final class LockHolder: Sendable {
    private let releasing = DispatchSemaphore(value: 0)
    private let finished = DispatchSemaphore(value: 0)

    init(_ store: MappedKV) {
        let taken = DispatchSemaphore(value: 0)
        let releasing = releasing
        let finished = finished
        Thread {
            let held = try? store.lock()
            taken.signal()
            releasing.wait()
            held?.unlock()
            finished.signal()
        }.start()
        taken.wait()
    }

    func release() {
        releasing.signal()
        finished.wait()
    }
}

/// Whether the calling thread can take the store's lock right now (it releases it at once).
func canTakeLock(_ store: MappedKV) -> Bool {
    do {
        if let held = try store.tryLock() {
            held.unlock()
            return true
        }
    } catch {}
    return false
}

extension Thread {
    /// Runs `body` on a new thread and returns its result once it finished.
    static func detachAndJoin<T: Sendable>(_ body: @escaping @Sendable () -> T) -> T {
        let result = Mutex<T?>(nil)
        let done = DispatchSemaphore(value: 0)
        Thread {
            let value = body()
            result.withLock { $0 = value }
            done.signal()
        }.start()
        done.wait()
        return result.withLock { $0! }
    }
}
