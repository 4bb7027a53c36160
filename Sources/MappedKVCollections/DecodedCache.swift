// A bounded cache of decoded entries, keyed by key, evicting by the CLOCK approximation of least
// recently used: a hit sets a slot's reference bit, and eviction sweeps a hand over the slots,
// clearing bits until it finds one clear. A hit is one hash lookup and a byte comparison; an
// insert is at most two hash operations. The invariant: a cached entry is returned only for
// exactly the stored bytes it was decoded from, so any write (by this process or another) makes
// the next read decode again, with no notification needed.

/// Decoded entries by key, at most `limit` of them, each with the stored bytes it came from.
struct DecodedCache<Value> {
    private struct Slot {
        var key: String
        var stored: [UInt8]
        var entry: Entry<Value>
        var referenced: Bool
    }

    let limit: Int
    private var slots: [Slot] = []
    private var slotByKey: [String: Int] = [:]
    private var hand = 0

    init(limit: Int) { self.limit = max(0, limit) }

    var count: Int { slotByKey.count }

    /// The entry decoded from `stored` for `key`, if that is what is cached; marks it used.
    mutating func entry(forKey key: String, stored: [UInt8]) -> Entry<Value>? {
        // The key's bytes too: `String` keys that are canonically equivalent share a dictionary
        // slot, but they are different entries in the store.
        guard let index = slotByKey[key], slots[index].stored == stored,
            ExactString(slots[index].key) == ExactString(key)
        else { return nil }
        slots[index].referenced = true
        return slots[index].entry
    }

    /// Caches `entry`, decoded from `stored`, evicting an entry not used since the hand last passed.
    mutating func insert(_ entry: Entry<Value>, stored: [UInt8], forKey key: String) {
        guard limit > 0 else { return }
        if let index = slotByKey[key] {
            slots[index] = Slot(key: key, stored: stored, entry: entry, referenced: true)
            return
        }
        guard slots.count >= limit else {
            slotByKey[key] = slots.count
            slots.append(Slot(key: key, stored: stored, entry: entry, referenced: false))
            return
        }
        while slots[hand].referenced {
            slots[hand].referenced = false
            hand = (hand + 1) % slots.count
        }
        slotByKey[slots[hand].key] = nil
        slots[hand] = Slot(key: key, stored: stored, entry: entry, referenced: false)
        slotByKey[key] = hand
        hand = (hand + 1) % slots.count
    }

    /// Drops `key` (its slot is reused by the next insert that needs one).
    mutating func remove(_ key: String) {
        guard let index = slotByKey.removeValue(forKey: key) else { return }
        // Move the last slot into the freed one, keeping the slots dense.
        let last = slots.count - 1
        if index != last {
            slots[index] = slots[last]
            slotByKey[slots[index].key] = index
        }
        slots.removeLast()
        if hand >= slots.count { hand = 0 }
    }

    /// Drops every entry.
    mutating func removeAll() {
        slots.removeAll()
        slotByKey.removeAll()
        hand = 0
    }
}
