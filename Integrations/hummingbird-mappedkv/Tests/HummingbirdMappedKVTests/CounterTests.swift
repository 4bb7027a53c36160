// Counters in one process: what `increment` stores and returns, its fixed window, and the keys it
// refuses; the count across processes is in MultiProcessTests.
//
// Invariant: each test has its own directory; time moves only when the test advances its clock.

import Foundation
import Hummingbird
import MappedKV
import Testing

@testable import HummingbirdMappedKV

@Suite("Counters")
struct CounterTests {
    @Test func incrementReturnsTheNewValueStoredAsAnInteger() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let persist = try MappedKVPersistDriver(directory: directory.path)
        #expect(try await persist.increment(key: "views") == 1)
        #expect(try await persist.increment(key: "views") == 2)
        #expect(try await persist.increment(key: "views", by: 40) == 42)
        #expect(try await persist.increment(key: "views", by: -50) == -8)
        #expect(try await persist.get(key: "views", as: Int.self) == -8)
        #expect(try await persist.getWithTTL(key: "views", as: Int.self)?.ttl == nil)
        // A value set as an Int is a counter too.
        try await persist.set(key: "set", value: 7)
        #expect(try await persist.increment(key: "set") == 8)
    }

    @Test func theExpiryIsSetWhenTheCounterIsCreatedAndAnExpiredCounterStartsAgain() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let clock = ManualClock()
        let persist = try MappedKVPersistDriver.testing(directory: directory.path, clock: clock)
        #expect(try await persist.increment(key: "window", by: 5, expires: .seconds(10)) == 5)
        clock.advance(by: .seconds(6))
        #expect(try await persist.increment(key: "window", expires: .seconds(10)) == 6)
        #expect(try await persist.getWithTTL(key: "window", as: Int.self)?.ttl == .seconds(4))  // not moved
        try await persist.set(key: "window", value: 9)  // a plain set keeps the expiry too
        clock.advance(by: .seconds(4) + .milliseconds(1))
        #expect(try await persist.get(key: "window", as: Int.self) == nil)
        #expect(try await persist.increment(key: "window", by: 3, expires: .seconds(10)) == 3)
        #expect(try await persist.getWithTTL(key: "window", as: Int.self)?.ttl == .seconds(10))
    }

    @Test func aKeyHoldingSomethingElseIsNotACounterAndIsLeftAsItIs() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let persist = try MappedKVPersistDriver(directory: directory.path)
        try await persist.set(key: "text", value: "5")
        try await persist.set(key: "fraction", value: 1.5)
        try await persist.set(key: "list", value: [1, 2])
        for key in ["text", "fraction", "list"] {
            await #expect(throws: MappedKVPersistError.notACounter(key: key)) {
                try await persist.increment(key: key)
            }
        }
        #expect(try await persist.get(key: "text", as: String.self) == "5")
        #expect(try await persist.get(key: "fraction", as: Double.self) == 1.5)
        // Nor is a value another program put in the store.
        let raw = try MappedKV(
            id: persist.configuration.storeID, directory: directory.path,
            configuration: persist.configuration.storeConfiguration)
        try raw.set(Int32(3), forKey: "raw")
        await #expect(throws: MappedKVPersistError.notACounter(key: "raw")) { try await persist.increment(key: "raw") }
        #expect(try raw.int32(forKey: "raw") == 3)
    }

    @Test func aSumPastIntsRangeIsAnErrorAndChangesNothing() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let persist = try MappedKVPersistDriver(directory: directory.path)
        try await persist.set(key: "high", value: Int.max - 1)
        #expect(try await persist.increment(key: "high") == Int.max)
        await #expect(throws: MappedKVPersistError.counterOutOfRange(key: "high", value: Int.max, delta: 1)) {
            try await persist.increment(key: "high")
        }
        #expect(try await persist.get(key: "high", as: Int.self) == Int.max)
        try await persist.set(key: "low", value: Int.min)
        await #expect(throws: MappedKVPersistError.counterOutOfRange(key: "low", value: Int.min, delta: -1)) {
            try await persist.increment(key: "low", by: -1)
        }
        #expect(try await persist.get(key: "low", as: Int.self) == Int.min)
    }

    @Test func concurrentIncrementsThroughTwoDriversAreAllCounted() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let drivers = [
            try MappedKVPersistDriver(directory: directory.path), try MappedKVPersistDriver(directory: directory.path),
        ]
        try await withThrowingTaskGroup(of: Void.self) { group in
            for index in 0..<400 {
                group.addTask { try await drivers[index % 2].increment(key: "hits") }
            }
            try await group.waitForAll()
        }
        #expect(try await drivers[0].get(key: "hits", as: Int.self) == 400)
    }
}
