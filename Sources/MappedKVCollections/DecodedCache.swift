// A bounded least-recently-used cache of decoded entries, keyed by key. The invariant: a cached
// entry is returned only for exactly the stored bytes it was decoded from, so any write (by this
// process or another) makes the next read decode again, with no notification needed.

/// Decoded entries by key, at most `limit` of them, each with the stored bytes it came from.
struct DecodedCache<Value> {
    private struct Slot {
        var stored: [UInt8]
        var entry: Entry<Value>
        var previous: String?
        var next: String?
    }

    let limit: Int
    private var slots: [String: Slot] = [:]
    /// The most recently used key, and the least.
    private var head: String?
    private var tail: String?

    init(limit: Int) { self.limit = max(0, limit) }

    var count: Int { slots.count }

    /// The entry decoded from `stored` for `key`, if that is what is cached; marks it used.
    mutating func entry(forKey key: String, stored: [UInt8]) -> Entry<Value>? {
        guard let slot = slots[key] else { return nil }
        guard slot.stored == stored else {
            remove(key)
            return nil
        }
        moveToFront(key)
        return slot.entry
    }

    /// Caches `entry`, decoded from `stored`, evicting the least recently used entry beyond the limit.
    mutating func insert(_ entry: Entry<Value>, stored: [UInt8], forKey key: String) {
        guard limit > 0 else { return }
        remove(key)
        slots[key] = Slot(stored: stored, entry: entry, previous: nil, next: head)
        if let head { slots[head]?.previous = key }
        head = key
        if tail == nil { tail = key }
        while slots.count > limit, let last = tail { remove(last) }
    }

    /// Drops `key`.
    mutating func remove(_ key: String) {
        guard let slot = slots.removeValue(forKey: key) else { return }
        if let previous = slot.previous { slots[previous]?.next = slot.next } else { head = slot.next }
        if let next = slot.next { slots[next]?.previous = slot.previous } else { tail = slot.previous }
    }

    /// Drops everything.
    mutating func removeAll() {
        slots.removeAll()
        head = nil
        tail = nil
    }

    private mutating func moveToFront(_ key: String) {
        guard head != key, let slot = slots[key] else { return }
        let entry = slot.entry
        let stored = slot.stored
        remove(key)
        slots[key] = Slot(stored: stored, entry: entry, previous: nil, next: head)
        if let head { slots[head]?.previous = key }
        head = key
        if tail == nil { tail = key }
    }
}
