// The key index of `SecondChanceList`: open addressing with linear probing over `slots`.
//
// Invariant: each live node has exactly one slot, holding its index, 32 bits of its key's hash and
// its value; an empty slot holds no value; every occupied slot is reachable from its home position
// without crossing an empty slot; the table is a power of two in size and at most four fifths full.

extension SecondChanceList {
    /// One position of the index: a live node and its value, or empty.
    @usableFromInline
    struct Slot {
        /// The node's key's tag in the high half, the node's index plus one in the low half; zero
        /// when the slot is empty.
        @usableFromInline var bits: UInt64
        /// The node's value; `nil` when the slot is empty.
        @usableFromInline var value: Value?

        /// An empty slot.
        @inlinable
        init() {
            self.bits = 0
            self.value = nil
        }

        /// A slot holding `value` for the node that `bits` names.
        @inlinable
        init(bits: UInt64, value: Value) {
            self.bits = bits
            self.value = value
        }
    }

    /// Where a key is, or where it would go.
    @usableFromInline
    enum SlotSearch {
        /// The key's live node and the slot that names it.
        case found(node: Int, slot: Int)
        /// The empty slot where the key would be stored (`SecondChanceList.none` if the table has no slots).
        case vacant(Int)
    }

    /// The 32 bits of `key`'s hash that the index compares and places slots by.
    @inlinable
    static func tag(of key: Key) -> UInt32 {
        UInt32(truncatingIfNeeded: key.hashValue)
    }

    /// A slot's bits: the tag in the high half, the node's index plus one in the low half (so an
    /// occupied slot is never zero).
    @inlinable
    static func slot(tag: UInt32, node: Int) -> UInt64 {
        UInt64(tag) << 32 | UInt64(node + 1)
    }

    @inlinable
    static func tag(in slot: UInt64) -> UInt32 {
        UInt32(truncatingIfNeeded: slot >> 32)
    }

    @inlinable
    static func node(in slot: UInt64) -> Int {
        Int(truncatingIfNeeded: slot & 0xFFFF_FFFF) - 1
    }

    /// Finds `key`, whose tag is `tag`: its node, or the empty slot where it would go.
    @inlinable
    func findSlot(for key: Key, tag: UInt32) -> SlotSearch {
        guard !slots.isEmpty else { return .vacant(SecondChanceList.none) }
        // Unchecked reads: positions are masked to the table, and a slot only names a live node.
        return slots.withUnsafeBufferPointer { slots in
            nodes.withUnsafeBufferPointer { nodes in
                let mask = slots.count - 1
                var position = Int(tag) & mask
                while true {
                    let slot = slots[position].bits
                    if slot == 0 { return .vacant(position) }
                    if Self.tag(in: slot) == tag {
                        let node = Self.node(in: slot)
                        if nodes[node].key == key { return .found(node: node, slot: position) }
                    }
                    position = (position &+ 1) & mask
                }
            }
        }
    }

    /// Makes room for one more key if the table would be more than four fifths full. Call it before
    /// looking for a vacant slot to fill.
    ///
    /// Four fifths rather than the usual three quarters keeps the table of a cache of 100,000 entries at
    /// 1 MiB instead of 2; backward-shift deletion keeps the probe sequences short at that load.
    @inlinable
    mutating func growIndexIfNeeded() {
        if (count + 1) * 5 > slots.count * 4 {
            rehash(capacity: Swift.max(16, slots.count * 2))
        }
    }

    /// Sizes the table for `count` keys, if it is smaller.
    mutating func reserveIndexCapacity(_ count: Int) {
        var capacity = 16
        while count * 5 > capacity * 4 { capacity *= 2 }
        if capacity > slots.count { rehash(capacity: capacity) }
    }

    /// Fills the empty slot at `position` with `node`, whose key has `tag`, and its value.
    @inlinable
    mutating func occupy(_ position: Int, tag: UInt32, node: Int, value: Value) {
        slots[position] = Slot(bits: Self.slot(tag: tag, node: node), value: value)
    }

    /// The position of the slot of the live node at `index`.
    @inlinable
    func slotPosition(of index: Int) -> Int {
        let wanted = Self.slot(tag: links[index].tag, node: index)
        let mask = slots.count &- 1
        var position = Int(links[index].tag) & mask
        while slots[position].bits != wanted { position = (position &+ 1) & mask }
        return position
    }

    /// Empties the slot of `node`, whose key has `tag`, shifts back the slots after it so that every
    /// slot stays reachable from its home (no tombstones), and returns the node's value.
    @inlinable
    mutating func vacate(tag: UInt32, node: Int) -> Value {
        let wanted = Self.slot(tag: tag, node: node)
        // Unchecked: positions are masked to the table, and the node's slot is in it.
        return slots.withUnsafeMutableBufferPointer { slots in
            let mask = slots.count &- 1
            var hole = Int(tag) & mask
            while slots[hole].bits != wanted { hole = (hole &+ 1) & mask }
            let value = slots[hole].value.take()!
            slots[hole].bits = 0
            var position = hole
            while true {
                position = (position &+ 1) & mask
                let slot = slots[position].bits
                if slot == 0 { break }
                // The slot may fill the hole if the hole is no further from the slot than its home is.
                // Swapping moves the value without copying it, and leaves the empty slot at `position`.
                let home = Int(Self.tag(in: slot)) & mask
                if (position &- home) & mask >= (position &- hole) & mask {
                    slots.swapAt(hole, position)
                    hole = position
                }
            }
            return value
        }
    }

    /// Moves every slot into a new table of `capacity` slots, a power of two.
    @inlinable
    mutating func rehash(capacity: Int) {
        var old = slots
        slots = ContiguousArray(repeating: Slot(), count: capacity)
        let mask = capacity - 1
        for oldPosition in old.indices where old[oldPosition].bits != 0 {
            var position = Int(Self.tag(in: old[oldPosition].bits)) & mask
            while slots[position].bits != 0 { position = (position + 1) & mask }
            swap(&slots[position], &old[oldPosition])
        }
    }

    /// A description of the first broken invariant of the index, or `nil`. O(n); for tests.
    func indexViolation() -> String? {
        guard slots.isEmpty || slots.count.nonzeroBitCount == 1 else { return "the index size is not a power of two" }
        guard count * 5 <= slots.count * 4 else { return "the index is too full" }
        let mask = slots.count - 1
        var occupied = 0
        for (position, entry) in slots.enumerated() {
            let slot = entry.bits
            guard slot != 0 else {
                guard entry.value == nil else { return "an empty slot holds a value" }
                continue
            }
            guard entry.value != nil else { return "an occupied slot holds no value" }
            occupied += 1
            let node = Self.node(in: slot)
            guard node >= 0, node < nodes.count, nodes[node].key != nil else { return "a slot names a free node" }
            guard links[node].tag == Self.tag(in: slot) else { return "a slot's tag differs from its node's" }
            var probe = Int(Self.tag(in: slot)) & mask
            while probe != position {
                guard slots[probe].bits != 0 else { return "a slot is cut off from its home" }
                probe = (probe + 1) & mask
            }
        }
        return occupied == count ? nil : "the index holds \(occupied) slots for \(count) nodes"
    }
}

extension SecondChanceList.Slot: Sendable where Value: Sendable {}
