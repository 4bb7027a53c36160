// The driver called directly: what the routes cannot show. Expiry kept or dropped by `set`, type
// mismatches both ways, values other programs put in the store, keys and durations at their limits,
// two drivers on one directory, tidying, and `run()` ending on graceful shutdown.
//
// Invariant: each test has its own directory; time moves only when the test advances its clock.

import Foundation
import Hummingbird
import Logging
import MappedKV
import ServiceLifecycle
import Testing

@testable import HummingbirdMappedKV

@Suite("Persist driver")
struct PersistDriverTests {
    struct Profile: Codable, Sendable, Equatable {
        var name: String
        var visits: Int
    }

    @Test func codableValueRoundTripsWithItsTimeToLive() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let clock = ManualClock()
        let persist = try MappedKVPersistDriver.testing(directory: directory.path, clock: clock)
        let profile = Profile(name: "Ada", visits: 3)
        try await persist.set(key: "p", value: profile, expires: .milliseconds(1500))
        clock.advance(by: .milliseconds(250))
        let found = try #require(try await persist.getWithTTL(key: "p", as: Profile.self))
        #expect(found.object == profile)
        #expect(found.ttl == .milliseconds(1250))
        clock.advance(by: .milliseconds(1250))
        #expect(try await persist.get(key: "p", as: Profile.self) == profile)  // alive through its last millisecond
        clock.advance(by: .milliseconds(1))
        #expect(try await persist.get(key: "p", as: Profile.self) == nil)
        #expect(try await persist.getWithTTL(key: "p", as: Profile.self) == nil)
    }

    @Test func setWithoutExpiryOverAnExpiredEntryKeepsItsExpiry() async throws {
        // As Hummingbird's memory driver: a session written back just after it expired stays
        // expired, rather than living for ever. Once tidied away, the key is absent and a set
        // without an expiry makes a value that never expires.
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let clock = ManualClock()
        let persist = try MappedKVPersistDriver.testing(directory: directory.path, clock: clock)
        try await persist.set(key: "k", value: "old", expires: .seconds(1))
        clock.advance(by: .seconds(2))
        try await persist.set(key: "k", value: "new")
        #expect(try await persist.get(key: "k", as: String.self) == nil)
        #expect(try await persist.removeExpired() == 1)
        try await persist.set(key: "k", value: "newer")
        let found = try #require(try await persist.getWithTTL(key: "k", as: String.self))
        #expect(found.object == "newer")
        #expect(found.ttl == nil)
    }

    @Test func setWithAnExpiryReplacesTheExistingOne() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let clock = ManualClock()
        let persist = try MappedKVPersistDriver.testing(directory: directory.path, clock: clock)
        try await persist.set(key: "k", value: 1, expires: .seconds(100))
        try await persist.set(key: "k", value: 2, expires: .seconds(5))
        #expect(try await persist.getWithTTL(key: "k", as: Int.self)?.ttl == .seconds(5))
        try await persist.set(key: "k", value: 3)  // keeps the 5 s
        #expect(try await persist.getWithTTL(key: "k", as: Int.self)?.ttl == .seconds(5))
    }

    @Test func wrongTypesAreInvalidConversionsBothWays() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let persist = try MappedKVPersistDriver(directory: directory.path)
        try await persist.set(key: "profile", value: Profile(name: "Ada", visits: 1))
        try await persist.set(key: "text", value: "hello")
        await #expect(throws: PersistError.invalidConversion) { try await persist.get(key: "profile", as: String.self) }
        await #expect(throws: PersistError.invalidConversion) { try await persist.get(key: "text", as: Profile.self) }
        await #expect(throws: PersistError.invalidConversion) { try await persist.get(key: "text", as: Int.self) }
        await #expect(throws: PersistError.invalidConversion) {
            try await persist.getWithTTL(key: "text", as: Profile.self)
        }
        // A failed conversion changes nothing.
        #expect(try await persist.get(key: "text", as: String.self) == "hello")
    }

    @Test func valuesOtherProgramsPutAreInvalidConversionsAndAreNeverTidied() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let clock = ManualClock()
        let persist = try MappedKVPersistDriver.testing(directory: directory.path, clock: clock)
        // Another handle on the same store, as the CLI or another program would write it.
        let raw = try MappedKV(
            id: persist.configuration.storeID, directory: directory.path,
            configuration: persist.configuration.storeConfiguration)
        try raw.set(Int32(7), forKey: "int")
        try raw.set([UInt8]([9, 9, 9]), forKey: "not-an-envelope")
        try raw.set([UInt8]([1, 2]), forKey: "short-expiry")
        await #expect(throws: PersistError.invalidConversion) { try await persist.get(key: "int", as: Int.self) }
        await #expect(throws: PersistError.invalidConversion) {
            try await persist.get(key: "not-an-envelope", as: String.self)
        }
        await #expect(throws: PersistError.invalidConversion) {
            try await persist.get(key: "short-expiry", as: String.self)
        }
        // create refuses to overwrite what it cannot read; set replaces it.
        await #expect(throws: PersistError.duplicate) { try await persist.create(key: "int", value: 1, expires: nil) }
        clock.advance(by: .seconds(3600))
        #expect(try await persist.removeExpired() == 0)
        #expect(try raw.int32(forKey: "int") == 7)
        try await persist.set(key: "int", value: 8)
        #expect(try await persist.get(key: "int", as: Int.self) == 8)
    }

    @Test func removeExpiredRemovesOnlyExpiredEntries() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let clock = ManualClock()
        let persist = try MappedKVPersistDriver.testing(directory: directory.path, clock: clock)
        for index in 0..<50 {
            try await persist.set(key: "short-\(index)", value: index, expires: .seconds(1))
            try await persist.set(key: "long-\(index)", value: index, expires: .seconds(100))
            try await persist.set(key: "forever-\(index)", value: index)
        }
        #expect(try await persist.removeExpired() == 0)
        clock.advance(by: .seconds(2))
        #expect(try await persist.removeExpired() == 50)
        #expect(try !persist.store.contains("short-7"))
        #expect(try await persist.get(key: "long-7", as: Int.self) == 7)
        #expect(try await persist.get(key: "forever-7", as: Int.self) == 7)
    }

    @Test func twoDriversOnOneDirectoryShareEntriesAndCreateOnce() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let first = try MappedKVPersistDriver(directory: directory.path)
        let second = try MappedKVPersistDriver(directory: directory.path)
        try await first.set(key: "shared", value: "from first", expires: .seconds(60))
        #expect(try await second.get(key: "shared", as: String.self) == "from first")
        // Many concurrent creates of one key through both drivers: exactly one wins.
        let winners = try await withThrowingTaskGroup(of: Bool.self) { group in
            for index in 0..<20 {
                let driver = index.isMultiple(of: 2) ? first : second
                group.addTask {
                    do {
                        try await driver.create(key: "once", value: index, expires: nil)
                        return true
                    } catch let error as PersistError where error == .duplicate {
                        return false
                    }
                }
            }
            return try await group.reduce(0) { $0 + ($1 ? 1 : 0) }
        }
        #expect(winners == 1)
        try await second.remove(key: "shared")
        #expect(try await first.get(key: "shared", as: String.self) == nil)
    }

    @Test func keysTheStoreRefusesAreClearErrors() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let persist = try MappedKVPersistDriver(directory: directory.path)
        await #expect(throws: MappedKVError.self) { try await persist.set(key: "", value: 1) }
        await #expect(throws: MappedKVError.self) { try await persist.set(key: "\u{1}hummingbird-persist", value: 1) }
        await #expect(throws: MappedKVError.self) {
            try await persist.create(key: String(repeating: "k", count: 20_000), value: 1, expires: nil)
        }
        // The store's kind mark survived, so the directory still opens as a persist store.
        _ = try MappedKVPersistDriver(directory: directory.path)
    }

    @Test func durationsAtTheLimitsNeitherTrapNorWrap() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let clock = ManualClock()
        let persist = try MappedKVPersistDriver.testing(directory: directory.path, clock: clock)
        try await persist.set(key: "long", value: 1, expires: .seconds(Int64.max))
        try await persist.set(key: "negative", value: 1, expires: .seconds(-5))
        try await persist.set(key: "very-negative", value: 1, expires: .seconds(Int64.min))
        clock.advance(by: .seconds(86_400 * 365 * 100))
        #expect(try await persist.get(key: "long", as: Int.self) == 1)
        #expect(try await persist.get(key: "negative", as: Int.self) == nil)
        #expect(try await persist.get(key: "very-negative", as: Int.self) == nil)
    }

    @Test func aStoreOfAnotherKindIsRefusedAndLeftAsItIs() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let plain = try MappedKV(id: "hummingbird-persist", directory: directory.path)
        try plain.set("keep me", forKey: "setting")
        plain.close()
        #expect(throws: MappedKVError.self) { try MappedKVPersistDriver(directory: directory.path) }
        let again = try MappedKV(id: "hummingbird-persist", directory: directory.path)
        #expect(try again.string(forKey: "setting") == "keep me")
    }

    @Test(.timeLimit(.minutes(1)))
    func runReturnsOnGracefulShutdown() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let persist = try MappedKVPersistDriver(
            directory: directory.path, configuration: .init(tidyFrequency: .milliseconds(1)))
        let group = ServiceGroup(
            configuration: ServiceGroupConfiguration(services: [persist], logger: Logger(label: "test")))
        let running = Task { try await group.run() }
        try await persist.set(key: "k", value: 1, expires: .zero)
        await group.triggerGracefulShutdown()
        try await running.value  // returns only if run() returned
    }

    @Test(.timeLimit(.minutes(1)))
    func runReturnsWhenCancelled() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let persist = try MappedKVPersistDriver(directory: directory.path)
        let running = Task { try await persist.run() }
        running.cancel()
        try await running.value
    }
}
