import MappedKV

// Small integer IDs for the keys of a bucket's indexed entries, so that every index stores a 4-byte
// ID per entry instead of the key. The invariant: an ID names one key from `assign` until `release`,
// and `key(of:)` of an assigned ID is that key; `slots` holds each assigned ID exactly once, where a
// linear probe from its key's hash finds it before any empty slot.
//
// The keys are kept once, in `keys`; the hash table from key to ID is an open-addressing array of
// 8-byte slots, each an ID and 32 bits of its key's hash (not a `[String: UInt32]`, which would hold
// a second copy of every key and take about 40 bytes an entry): at a million entries it takes
// 16 MiB instead of 42. The hash bits let a probe pass other keys' slots without reading their keys
// (a cache miss each in a large table).
//
// Keys are told apart by their bytes, as the store tells its keys apart: the hash is the store's
// `KeyHasher` over a key's UTF-8 and equality is byte equality. Swift's own `String` hashing and
// `==` follow canonical equivalence, under which "é" written as one scalar and as "e" plus a
// combining accent are one key, though the store holds them as two entries.

/// The keys of a bucket's indexed entries and their IDs.
final class KeyTable {
    private let hasher = KeyHasher()

    // A table is only used under the mutex of its ``CollectionIndexes``. Release builds skip the
    // exclusivity checks on the arrays a put's ID lookup and a page's key reads touch (8 checks a
    // put); debug builds keep them, so that the tests would catch an overlapping access.
    #if !DEBUG
    @exclusivity(unchecked)
    #endif
    private(set) var keys: [String] = []
    /// Each slot is the key's 32 hash bits over its ID + 1, or 0 when empty; the slot count is a
    /// power of two, at most 3/4 used.
    #if !DEBUG
    @exclusivity(unchecked)
    #endif
    private var slots: [UInt64] = []
    #if !DEBUG
    @exclusivity(unchecked)
    #endif
    private var free: [UInt32] = []

    /// The number of keys with an ID.
    private(set) var count = 0

    /// Every key with an ID, in no particular order.
    var assignedKeys: [String] { slots.compactMap { $0 == 0 ? nil : keys[Self.index(of: $0)] } }

    /// Every assigned ID, in no particular order.
    var assignedIDs: [UInt32] { slots.compactMap { $0 == 0 ? nil : UInt32(Self.index(of: $0)) } }

    /// The index in `keys` of an occupied slot's ID.
    private static func index(of slot: UInt64) -> Int { Int(truncatingIfNeeded: slot & 0xFFFF_FFFF) - 1 }

    /// The slot for `id` of a key whose hash is `hash`.
    private static func slot(_ id: UInt32, hash: Int) -> UInt64 {
        UInt64(truncatingIfNeeded: hash) << 32 | (UInt64(id) + 1)
    }

    /// The hash of `key`'s UTF-8 bytes.
    private func hash(_ key: String) -> Int {
        var key = key
        return Int(truncatingIfNeeded: key.withUTF8 { hasher.hash(UnsafeRawBufferPointer($0)) })
    }

    /// The ID of `key`, if it has one.
    func id(of key: String) -> UInt32? {
        guard !slots.isEmpty else { return nil }
        return find(key, hash: hash(key)).id
    }

    /// The key of an assigned ID.
    func key(of id: UInt32) -> String { keys[Int(id)] }

    /// The sum of what ``touchKeys(of:)`` last read; nothing reads it (it is stored so that the
    /// compiler keeps the reads).
    private var touchedSum: UInt64 = 0

    /// Reads the keys of `ids` (each an assigned ID) so that they are in the cache for the
    /// ``key(of:)`` calls that follow: the reads do not depend on each other, so a page of keys
    /// costs about one cache miss instead of one each.
    func touchKeys(of ids: [UInt32]) {
        var sum: UInt64 = 0
        keys.withUnsafeBytes { bytes in
            let stride = MemoryLayout<String>.stride
            for id in ids where (Int(id) + 1) * stride <= bytes.count {
                sum &+= bytes.loadUnaligned(fromByteOffset: Int(id) * stride, as: UInt64.self)
            }
        }
        touchedSum = sum
    }

    /// The ID of `key`, assigned if it has none.
    func assign(_ key: String) -> UInt32 {
        if (count + 1) * 4 > slots.count * 3 { resize(to: max(16, slots.count * 2)) }
        let hash = hash(key)
        let (found, slot) = find(key, hash: hash)
        if let found { return found }
        let id: UInt32
        if let reused = free.popLast() {
            id = reused
            keys[Int(id)] = key
        } else {
            id = UInt32(keys.count)
            keys.append(key)
        }
        slots[slot] = Self.slot(id, hash: hash)
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
            let hash = hash(key)
            var slot = hash & mask
            while slots[slot] != 0 { slot = (slot + 1) & mask }
            slots[slot] = Self.slot(UInt32(id), hash: hash)
        }
        count = keys.count
    }

    /// Forgets `key`; its ID may be given to another key.
    func release(_ key: String) {
        guard !slots.isEmpty else { return }
        let (found, slot) = find(key, hash: hash(key))
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

    /// The ID of `key` (whose hash is `hash`) and its slot, or nil and the empty slot where it would go.
    private func find(_ key: String, hash: Int) -> (id: UInt32?, slot: Int) {
        let mask = slots.count - 1
        let tag = UInt64(truncatingIfNeeded: hash) << 32
        var slot = hash & mask
        while true {
            let stored = slots[slot]
            if stored == 0 { return (nil, slot) }
            if stored & 0xFFFF_FFFF_0000_0000 == tag, ExactString(keys[Self.index(of: stored)]) == ExactString(key) {
                return (UInt32(Self.index(of: stored)), slot)
            }
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
            // The slot's hash bits are the low 32 of its key's hash: enough for a home under 2^32 slots.
            let home = Int(truncatingIfNeeded: slots[next] >> 32) & mask
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
            var slot = Int(truncatingIfNeeded: stored >> 32) & mask
            while slots[slot] != 0 { slot = (slot + 1) & mask }
            slots[slot] = stored
        }
    }
}
