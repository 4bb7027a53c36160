// Helpers shared by the memory cache tests: a hand-driven clock, an eviction log and a seeded generator.
//
// Invariant: nothing here reads real time or unseeded randomness, so every test replays the same way.

import Synchronization

@testable import MappedKVCache

/// A clock that moves only when a test advances it.
final class MemoryCacheTestClock: Sendable {
    private let elapsed = Mutex(Duration.zero)

    /// The clock to give a cache.
    var clock: MemoryCacheClock {
        MemoryCacheClock { [self] in elapsed.withLock { $0 } }
    }

    /// The current reading.
    var now: Duration { elapsed.withLock { $0 } }

    /// Moves time forward (or, to test clamping, backward) by `duration`.
    func advance(by duration: Duration) {
        elapsed.withLock { $0 += duration }
    }
}

/// An integer key whose hash can be made to collide on purpose, to exercise the cache's key index.
struct MemoryCacheTestKey: Hashable, Sendable, CustomStringConvertible {
    var value: Int
    /// Whether the hash depends only on `value % 3`, so most keys collide.
    var colliding: Bool

    init(_ value: Int, colliding: Bool = false) {
        self.value = value
        self.colliding = colliding
    }

    static func == (lhs: Self, rhs: Self) -> Bool { lhs.value == rhs.value }

    func hash(into hasher: inout Hasher) {
        hasher.combine(colliding ? value % 3 : value)
    }

    var description: String { String(value) }
}

/// One eviction as the handler heard it.
struct MemoryCacheEvictionRecord<Key: Hashable & Sendable, Value: Equatable & Sendable>: Equatable, Sendable {
    var key: Key
    var value: Value
    var reason: MemoryCacheEvictionReason
}

/// Collects the evictions a cache reports.
final class MemoryCacheEvictionLog<Key: Hashable & Sendable, Value: Equatable & Sendable>: Sendable {
    private let records = Mutex<[MemoryCacheEvictionRecord<Key, Value>]>([])

    /// A handler that appends to this log.
    var handler: @Sendable (Key, Value, MemoryCacheEvictionReason) -> Void {
        { [self] key, value, reason in
            records.withLock { $0.append(MemoryCacheEvictionRecord(key: key, value: value, reason: reason)) }
        }
    }

    /// The records so far.
    var all: [MemoryCacheEvictionRecord<Key, Value>] { records.withLock { $0 } }

    /// The reasons so far.
    var reasons: [MemoryCacheEvictionReason] { all.map(\.reason) }

    /// Returns the records so far and empties the log.
    func drain() -> [MemoryCacheEvictionRecord<Key, Value>] {
        records.withLock { records in
            defer { records.removeAll() }
            return records
        }
    }
}

/// SplitMix64: a small, fast generator whose whole state is its seed.
struct MemoryCacheTestRandom: RandomNumberGenerator {
    private var state: UInt64

    init(seed: UInt64) {
        state = seed
    }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// Waits until `condition` holds or `limit` passes, checking every millisecond; returns whether it held.
func memoryCacheEventually(
    within limit: Duration = .seconds(10), _ condition: @Sendable () -> Bool
) async -> Bool {
    let deadline = ContinuousClock.now + limit
    while !condition() {
        guard ContinuousClock.now < deadline else { return false }
        try? await Task.sleep(for: .milliseconds(1))
    }
    return true
}
