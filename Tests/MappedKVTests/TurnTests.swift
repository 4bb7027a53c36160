import Testing

@testable import MappedKV

/// Turns: one holder at a time while its lease runs, none sooner than the interval after the last
/// finished unless forced, and a holder that never ends its turn loses it when the lease ends.
@Suite struct TurnTests {
    @Test func oneHolderAtATimeAndTheIntervalBetween() throws {
        let dir = TemporaryDirectory("turns")
        let clock = ManualClock(1_000_000)
        let configuration = Configuration(isMultiProcess: true, clock: clock.expiryClock)
        let store = try MappedKV(id: "t", directory: dir.path, configuration: configuration)
        #expect(try store.beginTurn("tidy", minimumInterval: .seconds(600), lease: .seconds(60)))
        // Held: nobody else gets it, forced or not.
        #expect(try !store.beginTurn("tidy", minimumInterval: .seconds(600), lease: .seconds(60)))
        #expect(try !store.beginTurn("tidy", minimumInterval: .zero, lease: .seconds(60), force: true))
        // Another turn of the same store is another record.
        #expect(try store.beginTurn("other", minimumInterval: .zero, lease: .seconds(60)))
        try store.endTurn("tidy")
        // Finished just now: not again before the interval, unless forced.
        clock.advance(599)
        #expect(try !store.beginTurn("tidy", minimumInterval: .seconds(600), lease: .seconds(60)))
        clock.advance(1)
        #expect(try store.beginTurn("tidy", minimumInterval: .seconds(600), lease: .seconds(60)))
        try store.endTurn("tidy")
        #expect(try store.beginTurn("tidy", minimumInterval: .seconds(600), lease: .seconds(60), force: true))
        // A holder that dies: the lease ends and the turn is free again.
        clock.advance(59)
        #expect(try !store.beginTurn("tidy", minimumInterval: .zero, lease: .seconds(60), force: true))
        clock.advance(1)
        #expect(try store.beginTurn("tidy", minimumInterval: .zero, lease: .seconds(60), force: true))
        // The record is not a key the store's users see as theirs to sweep.
        #expect(try store.sweepStep(from: .start) { _, _ in true }.visited == 0)
    }

    @Test func extremeLeasesAndDamagedRecordsNeverTrap() throws {
        let dir = TemporaryDirectory("turns-extreme")
        let store = try MappedKV(id: "t", directory: dir.path)
        #expect(try store.beginTurn("long", minimumInterval: .seconds(Int64.max), lease: .seconds(Int64.max)))
        #expect(try !store.beginTurn("long", minimumInterval: .zero, lease: .zero, force: true))
        // A record with numbers at the ends of Int64's range, as damage or another program may leave.
        try store.set("-9223372036854775808 -9223372036854775808", forKey: MappedKV.turnKey("odd"))
        #expect(try store.beginTurn("odd", minimumInterval: .seconds(60), lease: .seconds(60)))
        try store.set("garbage", forKey: MappedKV.turnKey("bad"))
        #expect(try store.beginTurn("bad", minimumInterval: .seconds(60), lease: .seconds(60)))
    }
}
