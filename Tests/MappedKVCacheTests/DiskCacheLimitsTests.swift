// Proves the trim limits: the byte limit counts inline and file bytes alike; the age limit
// follows the ManualClock, keeps an entry exactly at the limit and counts this process's pending
// access times; a free-space limit above what the disk has free empties the cache and one of 0
// removes nothing; a TTL, age or access-time flush interval too long to express in milliseconds
// means the far future (no trap, no wrap-around); the configured limits apply through `trim()`;
// the background trim (`trimInterval`) eventually applies them, skips its turns while another
// holder has `trim.lock` (each turn is seen opening and closing it) and ends when the cache is
// closed (its task is seen to end).
import Foundation
import Glibc
import MappedKV
import MappedKVCache
import Testing

@Suite struct DiskCacheLimitsTests {
    /// How long a test waits for the periodic trim's task to act, in seconds. It runs at
    /// background priority on the cooperative pool, which the whole suite in parallel can keep busy
    /// for minutes; the waits end as soon as it acts, so the deadline only bounds a failure.
    static let backgroundDeadline = 300.0

    func open(
        _ dir: CacheTestDirectory, clock: ManualClock, limits: DiskCacheLimits = DiskCacheLimits(),
        trimInterval: Duration? = nil
    ) throws -> DiskCache {
        let configuration = DiskCacheConfiguration(
            limits: limits, inlineThreshold: 64, trimInterval: trimInterval, accessTimeFlushInterval: .seconds(3_600),
            clock: clock.cacheClock)
        return try DiskCache(directory: dir.path, configuration: configuration)
    }

    @Test func theByteLimitCountsInlineAndFileBytes() throws {
        let dir = CacheTestDirectory("limits")
        let clock = ManualClock()
        let cache = try open(dir, clock: clock)
        for (key, size) in [("a", 40), ("b", 500), ("c", 60), ("d", 300)] {
            try cache.set([UInt8](repeating: UInt8(size & 0xFF), count: size), forKey: key)
            clock.advance(by: 1_000)
        }
        var statistics = try cache.statistics()
        #expect(statistics.bytes == 900 && statistics.inlineCount == 2 && statistics.fileCount == 2)

        var report = try cache.trim(toBytes: 400)  // a (40) and b (500) go: 360 left
        #expect(report.removedEntries == 2 && report.removedBytes == 540)
        statistics = try cache.statistics()
        #expect(statistics.bytes == 360 && statistics.inlineCount == 1 && statistics.fileCount == 1)
        #expect(try cache.entries().map(\.key) == ["c", "d"])
        #expect(DiskFixtures.names(in: dir.file("files")).count == 1)

        report = try cache.trim(toBytes: 360)  // exactly at the limit: nothing goes
        #expect(report.removedEntries == 0)
        report = try cache.trim(toBytes: 359)  // the inline c (60) goes, not the file d
        #expect(report.removedEntries == 1 && report.removedBytes == 60)
        #expect(try cache.entries().map(\.key) == ["d"])
        report = try cache.trim(toBytes: 0)
        #expect(try cache.statistics().count == 0 && cache.statistics().bytes == 0)
        #expect(DiskFixtures.names(in: dir.file("files")).isEmpty)
    }

    @Test func theAgeLimitFollowsTheClockAndPendingAccessTimes() throws {
        let dir = CacheTestDirectory("limits")
        let clock = ManualClock()
        let start = clock.now
        let cache = try open(dir, clock: clock, limits: DiskCacheLimits(age: .seconds(3)))
        for key in ["a", "b", "c"] {
            try cache.set(Array(key.utf8), forKey: key)
            clock.advance(by: 1_000)
        }
        clock.advance(by: 2_000)  // now start + 5 s: a was set at +0, b at +1, c at +2
        #expect(try cache.value(forKey: "a") == Array("a".utf8))  // a pending access at +5 s
        #expect(try cache.entries().map(\.lastAccess) == [start + 1_000, start + 2_000, start + 5_000])

        var report = try cache.trim()  // the configured limit: older than +2 s goes
        #expect(report.removedEntries == 1)
        #expect(try cache.entries().map(\.key) == ["c", "a"])  // c is exactly 3 s old and stays

        clock.advance(by: 1)
        report = try cache.trim(toAge: .seconds(3))
        #expect(report.removedEntries == 1)
        #expect(try cache.entries().map(\.key) == ["a"])

        cache.close()
        let reopened = try open(dir, clock: clock)  // the access time was flushed by the trim and close
        clock.advance(by: 2_999)  // a's last access (+5 s) is now exactly 3 s old
        #expect(try reopened.trim(toAge: .seconds(3)).removedEntries == 0)
        clock.advance(by: 1)
        #expect(try reopened.trim(toAge: .seconds(3)).removedEntries == 1)
        #expect(try reopened.statistics().count == 0)
    }

    @Test func hugeDurationsMeanTheFarFuture() throws {
        let dir = CacheTestDirectory("limits")
        let clock = ManualClock()
        let cache = try open(dir, clock: clock)
        try cache.set([1], forKey: "forever", timeToLive: .seconds(Int64.max))
        try cache.set([2], forKey: "long", timeToLive: .seconds(Int64.max / 1_000))
        clock.advance(by: 1_000_000)
        #expect(try cache.value(forKey: "forever") == [1])
        #expect(try cache.value(forKey: "long") == [2])
        #expect(try cache.entry(forKey: "forever")?.expiry ?? 0 > clock.now + 1_000_000_000_000)
        #expect(try cache.trim(toAge: .seconds(Int64.max)).removedEntries == 0)
        #expect(try cache.trim().removedEntries == 0)
        #expect(try cache.entries().map(\.key) == ["forever", "long"])  // accessed at the same time: by key
    }

    @Test func aHugeAccessTimeFlushIntervalCoalescesUntilClose() throws {
        let dir = CacheTestDirectory("limits")
        let clock = ManualClock()
        let configuration = DiskCacheConfiguration(
            accessTimeFlushInterval: .seconds(Int64.max), clock: clock.cacheClock)
        let cache = try DiskCache(directory: dir.path, configuration: configuration)
        try cache.set([1], forKey: "k")
        clock.advance(by: 5_000)
        #expect(try cache.value(forKey: "k") == [1])
        // A second handle on the manifest shares this process's instance: it sees what was written.
        let manifest = try MappedKV(
            id: "manifest", directory: dir.path,
            configuration: Configuration(isMultiProcess: true, processLock: .sharedMemory))
        // Access times are written as batch records (`t:<name>`, docs/FORMAT.md 10.1).
        #expect(try manifest.allKeys.filter { $0.hasPrefix("t:") }.isEmpty, "the read was written at once")
        #expect(try cache.entries().map(\.lastAccess) == [clock.now])
        cache.close()
        #expect(try manifest.allKeys.filter { $0.hasPrefix("t:") }.count == 1)
        manifest.close()
        let reopened = try DiskCache(directory: dir.path, configuration: configuration)
        #expect(try reopened.entries().map(\.lastAccess) == [clock.now], "the time was written at close")
        reopened.close()
    }

    @Test func theFreeSpaceLimit() throws {
        let dir = CacheTestDirectory("limits")
        let clock = ManualClock()
        let cache = try open(dir, clock: clock)
        for index in 0..<6 { try cache.set([UInt8](repeating: 7, count: 40 + index * 30), forKey: "k\(index)") }
        #expect(try cache.trim(toFreeSpace: 0).removedEntries == 0)
        #expect(try cache.statistics().count == 6)

        let free = DiskFixtures.freeSpace(dir.path)
        #expect(free > 0)
        let report = try cache.trim(toFreeSpace: free * 2 + (1 << 40))
        #expect(report.removedEntries == 6)
        #expect(try cache.statistics().count == 0 && cache.statistics().bytes == 0)
        #expect(DiskFixtures.names(in: dir.file("files")).isEmpty)
    }

    @Test func theBackgroundTrimAppliesTheLimitsAndStopsWhenClosed() async throws {
        let dir = CacheTestDirectory("limits")
        let clock = ManualClock()
        // An age limit, which only the periodic trim applies (no set schedules a trim for it).
        let cache = try open(
            dir, clock: clock, limits: DiskCacheLimits(age: .seconds(3)), trimInterval: .milliseconds(20))
        for index in 0..<10 {
            try cache.set([UInt8](repeating: UInt8(index), count: 10 + index * 20), forKey: "k\(index)")
            clock.advance(by: 1_000)
        }
        // k\(i) was set at +i s and it is now +10 s: k7, exactly 3 s old, is the oldest kept.
        #expect(try await eventually(within: Self.backgroundDeadline) { try cache.statistics().count <= 3 })
        #expect(try cache.entries().map(\.key) == ["k7", "k8", "k9"])

        // Closed: the loop of turns ends (close waits for a turn under way, and no turn starts
        // after it), so no turn can run again. Its end is awaited, not a fixed time.
        let task = try #require(cache.backgroundTrimTask)
        cache.close()
        #expect(cache.backgroundTrimTask == nil)
        #expect(try await ends(task, within: Self.backgroundDeadline), "the background trim went on after close")
        withExtendedLifetime(cache) {}
    }

    @Test func theBackgroundTrimSkipsItsTurnWhileAnotherHoldsTheTrimLock() async throws {
        let dir = CacheTestDirectory("limits")
        let clock = ManualClock()
        let holder = Glibc.open(dir.file("trim.lock"), O_RDWR | O_CREAT, 0o600)
        try #require(holder >= 0)
        defer { Glibc.close(holder) }
        #expect(flock(holder, LOCK_EX) == 0)  // as another process trimming would
        let closes = try DiskFileCloses(dir.file("trim.lock"))
        // An age limit, which only the periodic trim applies (no set schedules a trim for it).
        let cache = try open(
            dir, clock: clock, limits: DiskCacheLimits(age: .seconds(1)), trimInterval: .milliseconds(20))
        for index in 0..<5 { try cache.set([UInt8(index)], forKey: "k\(index)") }
        clock.advance(by: 2_000)  // every entry is past the age limit from here on
        let before = closes.count
        // Each turn opens trim.lock, finds it held and closes it. Two turns end after the clock
        // moved (the second also began after it), and nothing was trimmed.
        #expect(
            try await eventually(within: Self.backgroundDeadline) { closes.count >= before + 2 },
            "no background turn came")
        #expect(try cache.statistics().count == 5)
        #expect(flock(holder, LOCK_UN) == 0)
        #expect(try await eventually(within: Self.backgroundDeadline) { try cache.statistics().count == 0 })
        cache.close()
    }
}
