// The memory cache's clocks and its conversion of durations to nanoseconds.
//
// Invariant: system clocks are only checked for order, never for elapsed real time.

import Testing

@testable import MappedKVCache

@Suite("MemoryCacheClock")
struct MemoryCacheClockTests {
    // The clock is made in the body: test arguments are evaluated when the run starts, which in a
    // long run can be minutes before this test executes.
    @Test(arguments: ["continuous", "coarse"])
    func systemClocksStartNearZeroAndNeverGoBack(name: String) {
        let clock = name == "continuous" ? MemoryCacheClock.continuous : MemoryCacheClock.coarse
        var previous = clock.nanoseconds
        #expect(previous >= 0, "\(name)")
        #expect(clock.now < .seconds(60), "\(name): the origin is when the clock was made")
        for _ in 0..<1_000 {
            let reading = clock.nanoseconds
            #expect(reading >= previous, "\(name)")
            previous = reading
        }
    }

    @Test func aCustomClockIsReadAsGiven() {
        let clock = MemoryCacheClock { .milliseconds(1_500) }
        #expect(clock.now == .milliseconds(1_500))
        #expect(clock.nanoseconds == 1_500_000_000)
    }

    @Test func durationsSaturateAtTheEndsOfInt64() {
        #expect(MemoryCacheClock.nanoseconds(.zero) == 0)
        #expect(MemoryCacheClock.nanoseconds(.nanoseconds(-1)) == -1)
        #expect(MemoryCacheClock.nanoseconds(.seconds(2) + .nanoseconds(3)) == 2_000_000_003)
        #expect(MemoryCacheClock.nanoseconds(.seconds(Int64.max)) == .max)
        #expect(MemoryCacheClock.nanoseconds(.seconds(Int64.min)) == .min)
    }

    @Test func hugeDurationsMeanNeverWithoutOverflow() {
        let testClock = MemoryCacheTestClock()
        let cache = MemoryCache<Int, Int>(
            limits: .init(age: .seconds(Int64.max)), trimInterval: nil, clock: testClock.clock)
        testClock.advance(by: .seconds(1_000_000))
        cache.set(1, forKey: 1, timeToLive: .seconds(Int64.max))
        testClock.advance(by: .seconds(1_000_000_000))
        cache.trimExpiredAndAged()
        #expect(cache.value(forKey: 1) == 1)
        cache.trim(toAge: .seconds(Int64.max))
        #expect(cache.contains(1))
    }
}
