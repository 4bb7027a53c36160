// Small integer IDs for the keys of a bucket's indexed entries, so that every index stores a 4-byte
// ID per entry instead of the key. The invariant: an ID names one key from `assign` until `release`,
// and `key(of:)` of an assigned ID is that key; `slots` holds each assigned ID exactly once, where a
// linear probe from its key's hash finds it before any empty slot.
//
// The keys are kept once, in `keys`; the hash table from key to ID is an open-addressing array of
// 4-byte IDs (not a `[String: UInt32]`, which would hold a second copy of every key and take about
// 40 bytes an entry): at a million entries it takes 8 MiB instead of 42.

/// The keys of a bucket's indexed entries and their IDs.
final class KeyTable {
    // Unchecked exclusivity: a table is only used under the mutex of its ``CollectionIndexes``.
    @exclusivity(unchecked) private(set) var keys: [String] = []
    /// Each slot is an ID + 1, or 0 when empty; the slot count is a power of two, at most 3/4 used.
    @exclusivity(unchecked) private var slots: [UInt32] = []
    @exclusivity(unchecked) private var free: [UInt32] = []

    /// The number of keys with an ID.
    private(set) var count = 0

    /// Every key with an ID, in no particular order.
    var assignedKeys: [String] { slots.compactMap { $0 == 0 ? nil : keys[Int($0 - 1)] } }

    /// The ID of `key`, if it has one.
    func id(of key: String) -> UInt32? {
        guard !slots.isEmpty else { return nil }
        let (found, _) = find(key)
        return found
    }

    /// The key of an assigned ID.
    func key(of id: UInt32) -> String { keys[Int(id)] }

    /// The ID of `key`, assigned if it has none.
    func assign(_ key: String) -> UInt32 {
        if (count + 1) * 4 > slots.count * 3 { resize(to: max(16, slots.count * 2)) }
        let (found, slot) = find(key)
        if let found { return found }
        let id: UInt32
        if let reused = free.popLast() {
            id = reused
            keys[Int(id)] = key
        } else {
            id = UInt32(keys.count)
            keys.append(key)
        }
        slots[slot] = id + 1
        count += 1
        return id
    }

    /// Fills an empty table with `keys`, each key's ID its position (the keys are distinct: they
    /// are a store's keys).
    func load(_ keys: [String]) {
        precondition(count == 0, "load fills an empty table")
        // A copy with no spare capacity: the scan grew the array by doubling.
        self.keys = keys.withUnsafeBufferPointer { Array($0) }
        slots = Array(repeating: 0, count: Self.slotCount(for: keys.count))
        let mask = slots.count - 1
        for (id, key) in keys.enumerated() {
            // Distinct keys: the first empty slot of the probe is the key's, no comparison needed.
            var slot = key.hashValue & mask
            while slots[slot] != 0 { slot = (slot + 1) & mask }
            slots[slot] = UInt32(id) + 1
        }
        count = keys.count
    }

    /// Forgets `key`; its ID may be given to another key.
    func release(_ key: String) {
        guard !slots.isEmpty else { return }
        let (found, slot) = find(key)
        guard let id = found else { return }
        removeSlot(slot)
        keys[Int(id)] = ""
        free.append(id)
        count -= 1
    }

    // MARK: The hash table

    /// The smallest power-of-two slot count that holds `count` keys at most 3/4 full.
    private static func slotCount(for count: Int) -> Int {
        var slots = 16
        while count * 4 > slots * 3 { slots *= 2 }
        return slots
    }

    /// The ID of `key` and its slot, or nil and the empty slot where it would go.
    private func find(_ key: String) -> (UInt32?, Int) {
        let mask = slots.count - 1
        var slot = key.hashValue & mask
        while true {
            let stored = slots[slot]
            if stored == 0 { return (nil, slot) }
            if keys[Int(stored - 1)] == key { return (stored - 1, slot) }
            slot = (slot + 1) & mask
        }
    }

    /// Empties `slot`, moving back the entries after it whose probe passes through it (so that
    /// every probe still reaches its key before an empty slot).
    private func removeSlot(_ slot: Int) {
        let mask = slots.count - 1
        var hole = slot
        var next = (slot + 1) & mask
        while slots[next] != 0 {
            let home = keys[Int(slots[next] - 1)].hashValue & mask
            // The entry may move to the hole unless its home lies cyclically in (hole, next].
            let homeAfterHole = (home &- hole) & mask
            let nextAfterHole = (next &- hole) & mask
            if homeAfterHole == 0 || homeAfterHole > nextAfterHole {
                slots[hole] = slots[next]
                hole = next
            }
            next = (next + 1) & mask
        }
        slots[hole] = 0
    }

    /// Rehashes every assigned key into `slotCount` slots.
    private func resize(to slotCount: Int) {
        let old = slots
        slots = Array(repeating: 0, count: slotCount)
        let mask = slotCount - 1
        for stored in old where stored != 0 {
            var slot = keys[Int(stored - 1)].hashValue & mask
            while slots[slot] != 0 { slot = (slot + 1) & mask }
            slots[slot] = stored
        }
    }
}
