import Synchronization

// The race a memory tier must close: a read misses memory, reads the disk, and before it keeps
// what it read in memory, another process replaces the entry and this process drops the key from
// memory (which held nothing yet); the read then keeps the old value for good.
//
// The invariant: every drop of a key from memory bumps the key's counter first. A read notes the
// counter before it reads the disk and checks it again after it has kept the value; if it moved, a
// drop may have run between the two, so the read drops what it kept. Keys share counters by hash
// (256 of them), so a bump also makes a few unrelated fills re-read later: a miss, never a stale hit.

/// Per-key-hash counters of drops from a memory tier.
final class InvalidationCounters: Sendable {
    private static let slots = 256
    private let counters = Mutex([UInt64](repeating: 0, count: InvalidationCounters.slots))

    /// The slot of `key`.
    private static func slot(_ key: String) -> Int { Int(UInt(bitPattern: key.hashValue) % UInt(slots)) }

    /// The counter of `key` now.
    func value(for key: String) -> UInt64 {
        let slot = Self.slot(key)
        return counters.withLock { $0[slot] }
    }

    /// Bumps the counter of `key` and returns its new value.
    func bump(_ key: String) -> UInt64 {
        let slot = Self.slot(key)
        return counters.withLock { counters in
            counters[slot] &+= 1
            return counters[slot]
        }
    }

    /// Bumps the counters of `keys`.
    func bump(_ keys: some Sequence<String>) {
        let slots = keys.map(Self.slot)
        counters.withLock { counters in
            for slot in slots { counters[slot] &+= 1 }
        }
    }

    /// Bumps every counter.
    func bumpAll() {
        counters.withLock { counters in
            for slot in counters.indices { counters[slot] &+= 1 }
        }
    }
}
