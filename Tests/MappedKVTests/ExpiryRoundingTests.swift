import Foundation
import Glibc
import MappedKVFormat
import Synchronization
import Testing

@testable import MappedKV

/// A clock the test moves by hand, to the nanosecond.
final class PreciseManualClock: Sendable {
    private let time: Mutex<Duration>
    init(_ start: Duration) { time = Mutex(start) }
    var now: Duration { time.withLock { $0 } }
    func advance(_ delta: Duration) { time.withLock { $0 += delta } }
    var expiryClock: ExpiryClock { ExpiryClock(preciseNow: { self.now }) }
}

/// An expiry never comes earlier than asked: MMKV stores whole seconds, so every path that
/// computes an expiry time stores the current time rounded up plus the duration (docs/FORMAT.md
/// section 5). Checked with an injected clock to the nanosecond and against the system clock,
/// by the stored expiry times, never by sleeping.
@Suite struct ExpiryRoundingTests {
    /// The ways a value gets a computed expiry time.
    enum WritePath: CaseIterable {
        case set, batch, defaultDuration, importWithDefault, enableOnData
    }

    static let base: Duration = .seconds(1_700_000_000)

    /// Writes key `k` through `path` so that it should live one second, and returns its stored expiry time.
    func writeOneSecondValue(_ store: MappedKV, _ path: WritePath) throws -> UInt32? {
        switch path {
        case .set:
            try store.enableKeyExpiry()
            try store.set("v", forKey: "k", expiresAfter: .seconds(1))
        case .batch:
            try store.enableKeyExpiry()
            try store.batch { batch in try batch.set("v", forKey: "k", expiresAfter: .seconds(1)) }
        case .defaultDuration:
            try store.enableKeyExpiry(defaultDuration: .seconds(1))
            try store.set("v", forKey: "k")
        case .importWithDefault:
            try store.enableKeyExpiry(defaultDuration: .seconds(1))
            try store.importEntries([StoreEntry(key: "k", payload: "v".payloadBytes)])
        case .enableOnData:
            try store.set("v", forKey: "k")
            try store.enableKeyExpiry(defaultDuration: .seconds(1))
        }
        return try store.exportedEntries().first { $0.key == "k" }?.expiresAt
    }

    @Test(
        "a one-second expiry lives at least one second, whatever the fraction of the second it was set in",
        arguments: WritePath.allCases, [Duration.zero, .nanoseconds(1), .milliseconds(250), .nanoseconds(999_999_999)])
    func aOneSecondExpiryLivesAtLeastOneSecond(path: WritePath, fraction: Duration) throws {
        let dir = TemporaryDirectory("exp-round")
        let clock = PreciseManualClock(Self.base + fraction)
        let store = try MappedKV(id: "s", directory: dir.path, configuration: Configuration(clock: clock.expiryClock))
        let setAt = clock.now
        let stored = try #require(try writeOneSecondValue(store, path))
        // The ceiling of the time it was set plus one second.
        let baseSeconds = UInt32(Self.base.components.seconds)
        #expect(stored == baseSeconds + (fraction == .zero ? 1 : 2), "\(path) at +\(fraction)")
        clock.advance(setAt + .seconds(1) - .nanoseconds(1) - clock.now)
        #expect(try store.string(forKey: "k") == "v", "\(path) at +\(fraction): expired before one second passed")
        clock.advance(.seconds(Int64(stored)) - clock.now)
        #expect(try store.string(forKey: "k") == nil, "\(path) at +\(fraction): expires at its stored time")
    }

    @Test(
        "against the system clock, a stored expiry is at least the time before the set, rounded up, plus the duration")
    func theSystemClockRoundsUp() throws {
        func realtime() -> Duration {
            var reading = timespec()
            clock_gettime(CLOCK_REALTIME, &reading)
            return .seconds(Int64(reading.tv_sec)) + .nanoseconds(Int64(reading.tv_nsec))
        }
        func roundedUp(_ time: Duration) -> UInt32 {
            let (seconds, attoseconds) = time.components
            return UInt32(seconds) + (attoseconds > 0 ? 1 : 0)
        }
        let dir = TemporaryDirectory("exp-round-system")
        let store = try MappedKV(id: "s", directory: dir.path)
        try store.enableKeyExpiry()
        for round in 0..<20 {
            let before = realtime()
            try store.set("v\(round)", forKey: "k", expiresAfter: .seconds(1))
            let after = realtime()
            let stored = try #require(try store.exportedEntries().first?.expiresAt)
            #expect(stored >= roundedUp(before) + 1, "set at \(before), stored \(stored)")
            #expect(stored <= roundedUp(after) + 1, "set by \(after), stored \(stored)")
        }
    }

    @Test func aWholeSecondClockIsTakenAsExact() {
        let clock = ExpiryClock { 1_000 }
        #expect(clock.preciseNow() == .seconds(1_000))
        #expect(clock.expiration(after: 1) == 1_001)
        #expect(clock.expiration(after: 0) == ExpirySuffix.never)
        let precise = ExpiryClock(preciseNow: { .seconds(1_000) + .milliseconds(1) })
        #expect(precise.now() == 1_000, "now rounds down")
        #expect(precise.expiration(after: 1) == 1_002)
        #expect(
            ExpiryClock(preciseNow: { .seconds(Int64(UInt32.max)) - .milliseconds(1) }).expiration(after: 5) == .max)
        #expect(ExpiryClock(preciseNow: { .seconds(-3) }).roundedUpNow() == 0)
    }
}
