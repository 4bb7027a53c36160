import Foundation
import Testing

@testable import MappedKVCache

/// `DiskCache.increment`: counters stored as decimal digits, created at the delta, with the expiry
/// of their creation kept by every later increment, atomic between threads of two instances, and a
/// clear error (with nothing changed) for a value that is not a counter or a sum past `Int64`.
@Suite struct DiskCacheCounterTests {
    func open(_ dir: CacheTestDirectory, clock: ManualClock = ManualClock()) throws -> DiskCache {
        try DiskCache(
            directory: dir.path, configuration: DiskCacheConfiguration(trimInterval: nil, clock: clock.cacheClock))
    }

    @Test func countsInDecimalDigits() throws {
        let dir = CacheTestDirectory("counter-digits")
        let cache = try open(dir)
        defer { cache.close() }
        #expect(try cache.increment("hits") == 1)
        #expect(try cache.increment("hits", by: 41) == 42)
        #expect(try cache.value(forKey: "hits") == Array("42".utf8))
        #expect(try cache.increment("hits", by: -50) == -8)
        #expect(try JSONDecoder().decode(Int.self, from: Data(try #require(try cache.value(forKey: "hits")))) == -8)
    }

    @Test func theWindowIsFixedAtCreation() throws {
        let dir = CacheTestDirectory("counter-window")
        let clock = ManualClock()
        let cache = try open(dir, clock: clock)
        defer { cache.close() }
        #expect(try cache.increment("rate", expiresAfter: .seconds(10)) == 1)
        let end = try #require(try cache.entry(forKey: "rate")?.expiry)
        clock.advance(by: 9_999)
        #expect(try cache.increment("rate", expiresAfter: .seconds(10)) == 2)
        #expect(try cache.entry(forKey: "rate")?.expiry == end)
        clock.advance(by: 1)
        #expect(try cache.value(forKey: "rate") == nil)
        #expect(try cache.increment("rate", expiresAfter: .seconds(10)) == 1)
        #expect(try cache.entry(forKey: "rate")?.expiry == end + 10_000)
    }

    @Test func otherValuesAndOverflowAreRefusedAndKept() throws {
        let dir = CacheTestDirectory("counter-refused")
        let cache = try open(dir)
        defer { cache.close() }
        for text in ["ten", "", " 1", "1.5", "--1", "99999999999999999999"] {
            try cache.set(Array(text.utf8), forKey: "odd")
            #expect(throws: CacheError.notACounter(key: "odd"), "\"\(text)\"") { try cache.increment("odd") }
            #expect(try cache.value(forKey: "odd") == Array(text.utf8))
        }
        try cache.set(Array(String(Int64.max).utf8), forKey: "big")
        #expect(throws: CacheError.counterOverflow(key: "big")) { try cache.increment("big") }
        #expect(try cache.value(forKey: "big") == Array(String(Int64.max).utf8))
    }

    @Test func threadsOfTwoInstancesLoseNoCount() async throws {
        let dir = CacheTestDirectory("counter-threads")
        let first = try DiskCache(directory: dir.path, configuration: DiskCacheConfiguration(trimInterval: nil))
        let second = try DiskCache(directory: dir.path, configuration: DiskCacheConfiguration(trimInterval: nil))
        defer {
            first.close()
            second.close()
        }
        await withTaskGroup(of: Void.self) { group in
            for thread in 0..<8 {
                let cache = thread.isMultiple(of: 2) ? first : second
                group.addTask { for _ in 0..<300 { _ = try? cache.increment("hits") } }
            }
        }
        #expect(try first.value(forKey: "hits") == Array("2400".utf8))
    }
}
