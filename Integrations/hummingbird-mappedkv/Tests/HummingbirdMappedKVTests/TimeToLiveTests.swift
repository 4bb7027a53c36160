// The time to live the driver reports, and when an entry stops being returned, below the
// millisecond the expiry is stored in: a TTL read right after a set is less than the duration set
// as soon as any time passed, and no entry expires before its duration has passed.
//
// Invariant: each test has its own directory; time moves only when the test advances its clock,
// except in the test that reads the system clock on purpose.

import Foundation
import MappedKV
import Testing

@testable import HummingbirdMappedKV

@Suite("Time to live")
struct TimeToLiveTests {
    @Test func aTimeToLiveReadInTheSameMillisecondAsTheSetIsLessThanTheDurationSet() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let clock = ManualClock()
        clock.advance(by: .microseconds(300))
        let persist = try MappedKVPersistDriver.testing(directory: directory.path, clock: clock)
        try await persist.set(key: "session", value: "ada", expires: .seconds(70))
        clock.advance(by: .microseconds(100))  // still the same millisecond
        let ttl = try #require(try await persist.getWithTTL(key: "session", as: String.self)?.ttl)
        #expect(ttl < .seconds(70))
        #expect(ttl > .seconds(70) - .milliseconds(1))
        #expect(ttl.components.seconds == 69)  // what hummingbird-auth's session TTL shows
    }

    @Test func aTimeToLiveIsNeverMoreThanTheDurationSet() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let clock = ManualClock()
        let persist = try MappedKVPersistDriver.testing(directory: directory.path, clock: clock)
        for offset in [0, 1, 250, 999_999, 1_000_000] {
            clock.advance(by: .nanoseconds(offset))
            try await persist.set(key: "k", value: 1, expires: .milliseconds(1500))
            let ttl = try #require(try await persist.getWithTTL(key: "k", as: Int.self)?.ttl)
            #expect(ttl <= .milliseconds(1500), "offset \(offset) ns: \(ttl)")
            #expect(ttl > .milliseconds(1499), "offset \(offset) ns: \(ttl)")
        }
    }

    @Test func anEntryLivesAtLeastItsDurationAndNotAMillisecondMore() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let clock = ManualClock()
        clock.advance(by: .microseconds(700))
        let persist = try MappedKVPersistDriver.testing(directory: directory.path, clock: clock)
        try await persist.set(key: "k", value: 1, expires: .microseconds(1500))  // ends 2.2 ms in
        clock.advance(by: .microseconds(1500))
        #expect(try await persist.get(key: "k", as: Int.self) == 1)  // its exact end
        #expect(try await persist.getWithTTL(key: "k", as: Int.self)?.ttl == .zero)
        clock.advance(by: .microseconds(799))
        #expect(try await persist.get(key: "k", as: Int.self) == 1)  // the last nanoseconds of its millisecond
        clock.advance(by: .microseconds(1))
        #expect(try await persist.get(key: "k", as: Int.self) == nil)
    }

    @Test func onTheSystemClockATimeToLiveReadRightAfterTheSetIsLessThanTheDurationSet() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let persist = try MappedKVPersistDriver(directory: directory.path)
        // Many tries, so that many fall within the set's millisecond, as in hummingbird-auth's test.
        for index in 0..<300 {
            try await persist.set(key: "k", value: index, expires: .seconds(70))
            let ttl = try #require(try await persist.getWithTTL(key: "k", as: Int.self)?.ttl)
            #expect(ttl < .seconds(70), "try \(index): \(ttl)")
            #expect(ttl > .seconds(65), "try \(index): \(ttl)")
        }
    }

    @Test func anEntryWrittenByTheFirstReleaseReadsWithItsTimeToLive() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let clock = ManualClock()
        let persist = try MappedKVPersistDriver.testing(directory: directory.path, clock: clock)
        // The envelope as the first release wrote it, by hand: tag 1, the expiry in milliseconds
        // since 1970 (little-endian Int64), then the JSON.
        let expiresAt = UInt64(clock.now / 1_000_000 + 70_000)
        let envelope =
            [UInt8(1)] + (0..<8).map { UInt8(truncatingIfNeeded: expiresAt >> (8 * $0)) } + Array(#""ada""#.utf8)
        let raw = try MappedKV(
            id: persist.configuration.storeID, directory: directory.path,
            configuration: persist.configuration.storeConfiguration)
        try raw.set(envelope, forKey: "session")
        clock.advance(by: .microseconds(10))
        let found = try #require(try await persist.getWithTTL(key: "session", as: String.self))
        #expect(found.object == "ada")
        #expect(found.ttl == .seconds(70) - .microseconds(10))
    }
}
