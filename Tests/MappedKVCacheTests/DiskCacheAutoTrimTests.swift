import Foundation
import Glibc
import Testing

@testable import MappedKVCache

/// Limits that hold by themselves: a set that takes the directory past its count or byte limit
/// starts a trim in the background, with no `trim()` call and no trim interval; a set never waits
/// for another process's trim (a holder of `trim.lock` only delays the background trim); the
/// running totals equal the manifest's entries after any sequence of writes.
@Suite struct DiskCacheAutoTrimTests {
    func open(
        _ dir: CacheTestDirectory, limits: DiskCacheLimits, clock: ManualClock = ManualClock()
    ) throws -> DiskCache {
        try DiskCache(
            directory: dir.path,
            configuration: DiskCacheConfiguration(
                limits: limits, inlineThreshold: 1_024, trimInterval: nil, clock: clock.cacheClock))
    }

    @Test func aByteLimitHoldsWithoutATrimCall() async throws {
        let dir = CacheTestDirectory("auto-trim-bytes")
        let clock = ManualClock()
        let cache = try open(dir, limits: DiskCacheLimits(bytes: 1_000_000), clock: clock)
        defer { cache.close() }
        for index in 0..<40 {
            try cache.set([UInt8](repeating: UInt8(index), count: 100_000), forKey: "v\(index)")
            clock.advance(by: 10)
        }
        let start = ContinuousClock.now
        #expect(try await eventually(within: 10) { try cache.statistics().bytes <= 1_000_000 })
        print("within the byte limit \(ContinuousClock.now - start) after the last set returned")
        // Least recently used first: the ten newest values are the ones kept.
        #expect(try cache.entries().map(\.key) == (30..<40).map { "v\($0)" })
        #expect(try cache.value(forKey: "v39") == [UInt8](repeating: 39, count: 100_000))
    }

    @Test func aCountLimitHoldsThroughACache() async throws {
        let dir = CacheTestDirectory("auto-trim-count")
        let cache = try Cache<[UInt8]>(
            directory: dir.path, diskConfiguration: DiskCacheConfiguration(limits: DiskCacheLimits(count: 5)))
        defer { cache.close() }
        for index in 0..<50 { try await cache.set([UInt8(index)], forKey: "k\(index)") }
        #expect(try await eventually(within: 10) { try cache.disk.statistics().count <= 5 })
        #expect(try await cache.value(forKey: "k49") == [49])
    }

    @Test func aSetDoesNotWaitForAnotherTrimmerAndTheTrimFollowsIt() async throws {
        let dir = CacheTestDirectory("auto-trim-busy")
        let holder = Glibc.open(dir.file("trim.lock"), O_RDWR | O_CREAT, 0o600)
        try #require(holder >= 0)
        defer { Glibc.close(holder) }
        #expect(flock(holder, LOCK_EX) == 0)  // as another process trimming would
        let cache = try open(dir, limits: DiskCacheLimits(count: 2))
        defer { cache.close() }
        for index in 0..<6 { try cache.set([UInt8(index)], forKey: "k\(index)") }  // returns: no wait
        #expect(try cache.statistics().count > 2)
        #expect(flock(holder, LOCK_UN) == 0)
        #expect(try await eventually(within: 10) { try cache.statistics().count <= 2 })
    }

    @Test func closeFinishesATrimThatWasDue() throws {
        let dir = CacheTestDirectory("auto-trim-close")
        let cache = try open(dir, limits: DiskCacheLimits(count: 3))
        for index in 0..<10 { try cache.set([UInt8(index)], forKey: "k\(index)") }
        cache.close()
        let reopened = try open(dir, limits: DiskCacheLimits())
        defer { reopened.close() }
        #expect(try reopened.statistics().count <= 3)
    }

    @Test(arguments: [UInt64(1), 2, 3, 4])
    func theTotalsFollowEveryWrite(seed: UInt64) throws {
        let dir = CacheTestDirectory("auto-trim-totals")
        let cache = try open(dir, limits: DiskCacheLimits())
        defer { cache.close() }
        var random = DiskTestRandom(seed: seed)
        for step in 0..<300 {
            let key = "k\(random.next() % 20)"
            switch random.next() % 100 {
            case ..<55:
                let size = Int(random.next() % 3_000)  // inline and file values
                try cache.set([UInt8](repeating: 7, count: size), forKey: key)
            case ..<80: try cache.removeValue(forKey: key)
            case ..<85: try cache.removeAll()
            case ..<95: try cache.trim(toCount: Int(random.next() % 15))
            default: try cache.trim(toBytes: Int(random.next() % 20_000))
            }
            let statistics = try cache.statistics()
            let totals = try cache.currentCounts()
            #expect(
                totals == CacheCounts(count: statistics.count, bytes: statistics.bytes),
                "seed \(seed), step \(step): totals \(totals), manifest \(statistics)")
            if totals != CacheCounts(count: statistics.count, bytes: statistics.bytes) { return }
        }
    }

    @Test func totalsMissingFromAnOlderCacheAreCountedFromTheManifest() throws {
        let dir = CacheTestDirectory("auto-trim-upgrade")
        let cache = try open(dir, limits: DiskCacheLimits())
        for index in 0..<7 { try cache.set([UInt8](repeating: 1, count: 10), forKey: "k\(index)") }
        cache.close()
        try FileManager.default.removeItem(atPath: dir.file(CacheTotals.fileName))
        let reopened = try open(dir, limits: DiskCacheLimits(count: 4))
        defer { reopened.close() }
        #expect(try reopened.currentCounts() == CacheCounts(count: 7, bytes: 70))
    }
}
