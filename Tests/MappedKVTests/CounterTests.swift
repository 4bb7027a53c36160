import Foundation
import Synchronization
import Testing

@testable import MappedKV

/// `increment`: a counter is created at the delta, added to, read as an `Int64`, keeps the expiry
/// its creation set (a fixed window), and refuses a value that is not a counter or a sum past
/// `Int64`, changing nothing.
@Suite struct CounterTests {
    func open(_ dir: TemporaryDirectory, clock: ManualClock? = nil, keyExpiry: Bool = false) throws -> MappedKV {
        try MappedKV(
            id: "c", directory: dir.path,
            configuration: Configuration(
                clock: clock?.expiryClock ?? .system, keyExpiry: keyExpiry ? .zero : nil))
    }

    @Test func createsAddsAndReadsAsAnInt64() throws {
        let dir = TemporaryDirectory("counter-basic")
        let store = try open(dir)
        #expect(try store.increment("hits") == 1)
        #expect(try store.increment("hits", by: 41) == 42)
        #expect(try store.increment("hits", by: -50) == -8)
        #expect(try store.value(forKey: "hits", as: Int64.self) == -8)
        #expect(try store.increment("other", by: 7) == 7)
        store.close()
        let reopened = try open(dir)
        #expect(try reopened.increment("hits") == -7)
    }

    @Test func aValueThatIsNotACounterIsRefusedAndKept() throws {
        let dir = TemporaryDirectory("counter-other")
        let store = try open(dir)
        try store.set("ten", forKey: "name")
        try store.set([UInt8]([1, 2, 3]), forKey: "blob")
        #expect(throws: MappedKVError.notACounter(key: "name")) { try store.increment("name") }
        #expect(throws: MappedKVError.notACounter(key: "blob")) { try store.increment("blob") }
        #expect(try store.string(forKey: "name") == "ten")
        #expect(try store.bytes(forKey: "blob") == [1, 2, 3])
    }

    @Test func aSumPastInt64IsRefusedAndTheCounterKept() throws {
        let dir = TemporaryDirectory("counter-overflow")
        let store = try open(dir)
        try store.set(Int64.max - 1, forKey: "big")
        #expect(try store.increment("big") == .max)
        #expect(throws: MappedKVError.counterOverflow(key: "big", value: .max, delta: 1)) {
            try store.increment("big")
        }
        try store.set(Int64.min, forKey: "small")
        #expect(throws: MappedKVError.counterOverflow(key: "small", value: .min, delta: -1)) {
            try store.increment("small", by: -1)
        }
        #expect(try store.value(forKey: "big", as: Int64.self) == .max)
        #expect(try store.value(forKey: "small", as: Int64.self) == .min)
    }

    @Test func theWindowIsFixedAtCreation() throws {
        let dir = TemporaryDirectory("counter-window")
        let clock = ManualClock(1_000_000)
        let store = try open(dir, clock: clock, keyExpiry: true)
        #expect(try store.increment("rate", expiresAfter: .seconds(10)) == 1)
        // Increments inside the window count on and do not move its end.
        for expected in Int64(2)...9 {
            clock.advance(1)
            #expect(try store.increment("rate", expiresAfter: .seconds(10)) == expected)
        }
        clock.advance(1)  // 1_000_009: the last second of the window
        #expect(try store.increment("rate", expiresAfter: .seconds(10)) == 10)
        clock.advance(1)  // 1_000_010: the window is over
        #expect(try store.value(forKey: "rate", as: Int64.self) == nil)
        #expect(try store.increment("rate", expiresAfter: .seconds(10)) == 1)
        clock.advance(9)
        #expect(try store.increment("rate", expiresAfter: .seconds(10)) == 2)
        clock.advance(1)
        #expect(try store.increment("rate", expiresAfter: .seconds(10)) == 1)
    }

    @Test func aWindowNeedsKeyExpiry() throws {
        let dir = TemporaryDirectory("counter-no-expiry")
        let store = try open(dir)
        #expect(throws: MappedKVError.self) { try store.increment("rate", expiresAfter: .seconds(10)) }
        #expect(try store.contains("rate") == false)
    }

    @Test func threadsOfTwoHandlesLoseNoCount() async throws {
        let dir = TemporaryDirectory("counter-threads")
        let first = try MappedKV(id: "c", directory: dir.path, configuration: Configuration(isMultiProcess: true))
        let second = try MappedKV(id: "c", directory: dir.path, configuration: Configuration(isMultiProcess: true))
        let threads = 8
        let increments = 500
        await withTaskGroup(of: Void.self) { group in
            for thread in 0..<threads {
                let store = thread.isMultiple(of: 2) ? first : second
                group.addTask {
                    for _ in 0..<increments { _ = try? store.increment("hits") }
                }
            }
        }
        #expect(try first.value(forKey: "hits", as: Int64.self) == Int64(threads * increments))
    }
}
