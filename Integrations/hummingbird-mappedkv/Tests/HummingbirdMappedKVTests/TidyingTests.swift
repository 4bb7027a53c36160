// Tidying in bounded steps and by turns: removeExpired goes through the store a slice of keys at a
// time and removes only the expired entries of its namespace; of several drivers on one store, one
// tidies at a time and not again before the interval, a holder that never ends its turn loses it
// when its lease ends, and namespaces take turns apart.
//
// Invariant: each test has its own directory; time moves only when the test advances its clock,
// the store's turns included.

import Foundation
import MappedKV
import Testing

@testable import HummingbirdMappedKV

@Suite("Tidying")
struct TidyingTests {
    @Test func removeExpiredGoesThroughTheStoreInSteps() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let clock = ManualClock()
        let persist = try MappedKVPersistDriver.testing(directory: directory.path, clock: clock)
        for index in 0..<3000 {
            try await persist.set(key: "k\(index)", value: index, expires: .seconds(index.isMultiple(of: 2) ? 1 : 100))
        }
        try await persist.set(key: "forever", value: 0)
        clock.advance(by: .seconds(2))
        let (removed, steps) = try await persist.removeExpired(keysPerStep: 256)
        #expect(removed == 1500)
        #expect(steps >= 6, "steps: \(steps)")  // about 3001 / 256, never the whole store at once
        #expect(try await persist.get(key: "k1", as: Int.self) == 1)
        #expect(try await persist.get(key: "forever", as: Int.self) == 0)
        #expect(try !persist.store.contains("k0"))
        #expect(try await persist.removeExpired() == 0)
    }

    @Test func oneDriverTidiesPerTurnAndNotAgainBeforeTheInterval() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let clock = ManualClock()
        let configuration = MappedKVPersistDriver.Configuration(tidyFrequency: .seconds(600))
        let first = try MappedKVPersistDriver.testing(
            directory: directory.path, clock: clock, configuration: configuration)
        let second = try MappedKVPersistDriver.testing(
            directory: directory.path, clock: clock, configuration: configuration)
        try await first.set(key: "a", value: 1, expires: .seconds(1))
        clock.advance(by: .seconds(2))
        #expect(try await first.tidyIfOurTurn(force: true) == 1)
        // The last turn ended just now: the other driver's timer does not tidy again...
        try await second.set(key: "b", value: 1, expires: .seconds(1))
        clock.advance(by: .seconds(2))
        #expect(try await second.tidyIfOurTurn(force: false) == nil)
        #expect(try second.store.contains("b"))
        // ...until the interval has passed since that turn ended; a start-up tidy need not wait.
        #expect(try await second.tidyIfOurTurn(force: true) == 1)
        clock.advance(by: .seconds(599))
        #expect(try await first.tidyIfOurTurn(force: false) == nil)
        clock.advance(by: .seconds(1))
        #expect(try await first.tidyIfOurTurn(force: false) == 0)
    }

    @Test func aTurnHeldElsewhereIsWaitedForUntilItsLeaseEnds() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let clock = ManualClock()
        let persist = try MappedKVPersistDriver.testing(directory: directory.path, clock: clock)
        let other = try MappedKVPersistDriver.testing(
            directory: directory.path, clock: clock, configuration: .init(namespace: "other"))
        try await persist.set(key: "a", value: 1, expires: .seconds(1))
        try await other.set(key: "a", value: 1, expires: .seconds(1))
        clock.advance(by: .seconds(2))
        // A process took the turn and was killed before it ended it.
        #expect(
            try persist.store.beginTurn(
                persist.tidyTurnName, minimumInterval: .zero, lease: MappedKVPersistDriver.tidyLease))
        #expect(try await persist.tidyIfOurTurn(force: true) == nil)
        // Another namespace has a turn of its own.
        #expect(try await other.tidyIfOurTurn(force: true) == 1)
        #expect(try persist.store.contains("a"))
        clock.advance(by: MappedKVPersistDriver.tidyLease)
        #expect(try await persist.tidyIfOurTurn(force: true) == 1)
        #expect(try !persist.store.contains("a"))
    }
}
