// The entries of `MemoryCache` in eviction order, with a second chance for the entries read.
//
// Invariant: the live nodes form one doubly linked list, the queue, from `newest` (queued last) to
// `oldest` (the next to be considered for eviction); a node is queued when it is stored and again when
// it gets its second chance, never when it is read; the low bit of `stamp` is set exactly on the live
// nodes read since they were last queued; the rest of the live nodes' stamps (their sequence numbers)
// are distinct and below `nextSequence`, and of two nodes the one stored or read later has the larger
// stamp; every other slot of
// `nodes` is on the free list and holds neither key nor value; each live node is found through exactly
// one slot of the key index (see SecondChanceList+Index.swift), which also holds its value; `count`,
// `totalCost` and `expiringCount` describe exactly the live nodes.

/// The entries of a cache in a FIFO queue with second chances (the CLOCK policy), with a hash index
/// from key to entry.
///
/// A read only marks its node (and records when, and in which order, it happened): it never relinks,
/// so a hit touches no memory beyond its index slot, its node and its value. Eviction looks at the
/// oldest node: one read since it was queued is queued again, unmarked, and the next is considered.
///
/// Everything lives in three arrays: the nodes (key and times, what a read checks and writes: 40
/// bytes each for a `String` key), their links, tags and costs (what queueing and removal touch) and
/// the index's slots, which hold the values. A value sits in its slot rather than its node so that a
/// hit's two loads after the slot, the node (to compare the key) and the value, do not wait on each
/// other: in random order, with the arrays far beyond the caches, that is one memory latency fewer
/// per hit. Nodes refer to each other by index and freed nodes are reused through a free list, so
/// once the arrays have grown, no operation allocates.
@usableFromInline
struct SecondChanceList<Key: Hashable, Value> {
    /// One entry, or a free slot (no key): the fields a read looks at or writes.
    @usableFromInline
    struct Node {
        /// The entry's key; `nil` in a free slot.
        @usableFromInline var key: Key?
        /// When the entry was stored or last read, in nanoseconds of the cache's clock.
        @usableFromInline var lastAccess: Int64
        /// When the entry expires, in nanoseconds of the cache's clock; `Int64.max` for never.
        @usableFromInline var expiry: Int64
        /// The sequence number of the entry's last store or read (its order among all stores and
        /// reads) shifted left by one, with the low bit set if the entry was read since it was last
        /// queued: one word, so that a hit writes one word besides `lastAccess`.
        @usableFromInline var stamp: UInt64

        /// Makes a live, unmarked node.
        @inlinable
        init(key: Key?, lastAccess: Int64, expiry: Int64, sequence: UInt64) {
            self.key = key
            self.lastAccess = lastAccess
            self.expiry = expiry
            self.stamp = sequence << 1
        }
    }

    /// The neighbours of a node in the queue, its key's tag and its cost: what a read does not touch.
    /// In a free slot, `older` is the next free slot.
    @usableFromInline
    struct Link {
        /// The node queued next after this one, or `SecondChanceList.none`.
        @usableFromInline var newer: Int32
        /// The node queued just before this one, or `SecondChanceList.none`.
        @usableFromInline var older: Int32
        /// The 32 bits of the key's hash that the index keeps.
        @usableFromInline var tag: UInt32
        /// The cost the entry was stored with.
        @usableFromInline var cost: Int

        /// Makes a link between `newer` and `older`.
        @inlinable
        init(newer: Int32, older: Int32, tag: UInt32, cost: Int) {
            self.newer = newer
            self.older = older
            self.tag = tag
            self.cost = cost
        }
    }

    /// The index that stands for no node.
    @inlinable static var none: Int { -1 }

    /// Every node, live or free.
    @usableFromInline var nodes: ContiguousArray<Node> = []
    /// The links and costs of every node, at the same indices as `nodes`.
    @usableFromInline var links: ContiguousArray<Link> = []
    /// The key index and the values: open addressing with linear probing (see
    /// SecondChanceList+Index.swift).
    @usableFromInline var slots: ContiguousArray<Slot> = []
    /// The node queued last, or `none` when the list is empty.
    @usableFromInline var newest = SecondChanceList.none
    /// The node queued first, the next to be considered for eviction, or `none` when the list is empty.
    @usableFromInline var oldest = SecondChanceList.none
    /// The first free slot, or `none`.
    @usableFromInline var firstFree = SecondChanceList.none
    /// The sequence number the next store or read takes.
    @usableFromInline var nextSequence: UInt64 = 0
    /// The number of live nodes.
    @usableFromInline var count = 0
    /// The summed cost of the live nodes.
    @usableFromInline var totalCost = 0
    /// The number of live nodes with an expiry.
    @usableFromInline var expiringCount = 0

    /// Whether the list has no live node.
    @inlinable var isEmpty: Bool { count == 0 }

    /// The key of the live node at `index`.
    @inlinable
    func key(at index: Int) -> Key { nodes[index].key! }

    /// The value of the live node at `index`. It probes the index for the node's slot: a hit, which
    /// already has the slot, reads ``value(inSlot:)``.
    @inlinable
    func value(at index: Int) -> Value { value(inSlot: slotPosition(of: index)) }

    /// The value in the occupied slot at `position`.
    @inlinable
    func value(inSlot position: Int) -> Value { slots[position].value! }

    /// The cost of the live node at `index`.
    @inlinable
    func cost(at index: Int) -> Int { links[index].cost }

    /// When the live node at `index` was stored or last read.
    @inlinable
    func lastAccess(at index: Int) -> Int64 { nodes[index].lastAccess }

    /// When the live node at `index` expires; `Int64.max` for never.
    @inlinable
    func expiry(at index: Int) -> Int64 { nodes[index].expiry }

    /// Whether the live node at `index` was read since it was last queued.
    @inlinable
    func isReferenced(_ index: Int) -> Bool { nodes[index].stamp & 1 != 0 }

    /// The node queued next after the one at `index`, or `none`.
    @inlinable
    func newer(than index: Int) -> Int { Int(links[index].newer) }

    /// Stores `value` for `key`, queued last and unmarked, and returns the value it replaced.
    @inlinable
    mutating func store(_ value: Value, forKey key: Key, cost: Int, time: Int64, expiry: Int64) -> Value? {
        let tag = Self.tag(of: key)
        let sequence = nextSequence
        nextSequence &+= 1
        growIndexIfNeeded()
        switch findSlot(for: key, tag: tag) {
        case .found(let index, let position):
            totalCost += cost - links[index].cost
            if nodes[index].expiry != .max { expiringCount -= 1 }
            if expiry != .max { expiringCount += 1 }
            let old = slots[position].value.take()
            slots[position].value = value
            nodes[index].expiry = expiry
            nodes[index].lastAccess = time
            nodes[index].stamp = sequence << 1
            links[index].cost = cost
            unlink(index)
            linkAsNewest(index)
            return old
        case .vacant(let slot):
            let index = allocate(key: key, tag: tag, cost: cost, lastAccess: time, expiry: expiry, sequence: sequence)
            occupy(slot, tag: tag, node: index, value: value)
            linkAsNewest(index)
            count += 1
            totalCost += cost
            if expiry != .max { expiringCount += 1 }
            return nil
        }
    }

    /// The live node holding `key`, or `nil`.
    @inlinable
    func find(_ key: Key) -> Int? {
        guard case .found(let index, _) = findSlot(for: key, tag: Self.tag(of: key)) else { return nil }
        return index
    }

    /// The live node holding `key` and the slot holding its value, or `nil`: what a hit needs.
    @inlinable
    func locate(_ key: Key) -> (node: Int, slot: Int)? {
        guard case .found(let index, let position) = findSlot(for: key, tag: Self.tag(of: key)) else { return nil }
        return (index, position)
    }

    /// Records a read of the live node at `index` at `time`: it is marked for a second chance, and
    /// stays where it is in the queue.
    @inlinable
    mutating func touch(_ index: Int, time: Int64) {
        let sequence = nextSequence
        nextSequence &+= 1
        // The hot path of every hit: one uniqueness check and no bounds check for the two words it
        // writes, in the node its key was just compared in.
        nodes.withUnsafeMutableBufferPointer { nodes in
            nodes[index].lastAccess = time
            nodes[index].stamp = sequence << 1 | 1
        }
    }

    /// The node eviction takes next: the oldest one not read since it was queued. Each read node met
    /// on the way is queued again, unmarked (its second chance).
    ///
    /// - Precondition: the list is not empty.
    @inlinable
    mutating func nextVictim() -> Int {
        while isReferenced(oldest) {
            giveSecondChance(oldest)
        }
        return oldest
    }

    /// Unmarks the live node at `index` and queues it last.
    @inlinable
    mutating func giveSecondChance(_ index: Int) {
        nodes[index].stamp &= ~1
        unlink(index)
        linkAsNewest(index)
    }

    /// Unlinks the live node at `index`, drops it from the index, frees it and returns its key and value.
    @inlinable
    mutating func remove(_ index: Int) -> (key: Key, value: Value) {
        unlink(index)
        let value = vacate(tag: links[index].tag, node: index)
        count -= 1
        totalCost -= links[index].cost
        let expiry = nodes[index].expiry
        if expiry != .max { expiringCount -= 1 }
        // `index` names a live node, so its key is set.
        let key = nodes[index].key.take()!
        links[index] = Link(newer: Int32(SecondChanceList.none), older: Int32(firstFree), tag: 0, cost: 0)
        firstFree = index
        return (key, value)
    }

    /// Puts an unlinked, unmarked live node made of the arguments in a free slot, or a new one, and
    /// returns its index. The caller puts its value in its index slot.
    ///
    /// A free slot's fields are written one by one: assigning a whole `Node` goes through the
    /// generic type's value witnesses, which cost more than the rest of a store.
    @inlinable
    mutating func allocate(
        key: Key, tag: UInt32, cost: Int, lastAccess: Int64, expiry: Int64, sequence: UInt64
    ) -> Int {
        guard firstFree == SecondChanceList.none else {
            let index = firstFree
            firstFree = Int(links[index].older)
            links[index].tag = tag
            links[index].cost = cost
            nodes.withUnsafeMutableBufferPointer { nodes in
                // A free slot: its key is nil, so nothing is released here.
                nodes[index].key = key
                nodes[index].lastAccess = lastAccess
                nodes[index].expiry = expiry
                nodes[index].stamp = sequence << 1
            }
            return index
        }
        precondition(nodes.count < Int32.max, "MemoryCache: too many entries")
        nodes.append(Node(key: key, lastAccess: lastAccess, expiry: expiry, sequence: sequence))
        links.append(
            Link(newer: Int32(SecondChanceList.none), older: Int32(SecondChanceList.none), tag: tag, cost: cost))
        return nodes.count - 1
    }

    /// Queues the unlinked node at `index` last.
    @inlinable
    mutating func linkAsNewest(_ index: Int) {
        let newest = self.newest
        // Unchecked: `index` and `newest` are nodes of the arrays.
        links.withUnsafeMutableBufferPointer { links in
            links[index].newer = Int32(SecondChanceList.none)
            links[index].older = Int32(newest)
            if newest != SecondChanceList.none { links[newest].newer = Int32(index) }
        }
        if newest == SecondChanceList.none { oldest = index }
        self.newest = index
    }

    /// Takes the live node at `index` out of the queue, leaving its own links stale.
    @inlinable
    mutating func unlink(_ index: Int) {
        var newest = self.newest
        var oldest = self.oldest
        // Unchecked: a live node's links name live nodes or `none`.
        links.withUnsafeMutableBufferPointer { links in
            let link = links[index]
            if link.newer != Int32(SecondChanceList.none) {
                links[Int(link.newer)].older = link.older
            } else {
                newest = Int(link.older)
            }
            if link.older != Int32(SecondChanceList.none) {
                links[Int(link.older)].newer = link.newer
            } else {
                oldest = Int(link.newer)
            }
        }
        self.newest = newest
        self.oldest = oldest
    }

    /// The live nodes' indices in queue order, the oldest (the next eviction candidate) first.
    var indicesInQueueOrder: [Int] {
        var result: [Int] = []
        result.reserveCapacity(count)
        var index = oldest
        while index != SecondChanceList.none {
            result.append(index)
            index = newer(than: index)
        }
        return result
    }

    /// The live nodes' indices, least recently stored or read first. O(n log n).
    var indicesLeastRecentFirst: [Int] {
        // Sequence numbers are distinct, so the mark in the low bit never decides the order.
        indicesInQueueOrder.sorted { nodes[$0].stamp < nodes[$1].stamp }
    }

    /// A copy of the live entries, in queue order with their marks and sequence numbers, in arrays and
    /// an index just large enough for them.
    ///
    /// `self` is left with free slots only.
    mutating func compacted() -> SecondChanceList {
        var result = SecondChanceList()
        result.nodes.reserveCapacity(count)
        result.links.reserveCapacity(count)
        result.reserveIndexCapacity(count)
        result.nextSequence = nextSequence
        var index = oldest
        while index != SecondChanceList.none {
            let value = slots[slotPosition(of: index)].value.take()!
            let key = nodes[index].key.take()!
            let node = nodes[index]
            let cost = links[index].cost
            let tag = Self.tag(of: key)
            guard case .vacant(let slot) = result.findSlot(for: key, tag: tag) else {
                preconditionFailure("SecondChanceList: a key is live twice")
            }
            let copy = result.allocate(
                key: key, tag: tag, cost: cost, lastAccess: node.lastAccess, expiry: node.expiry,
                sequence: node.stamp >> 1)
            result.nodes[copy].stamp = node.stamp
            result.occupy(slot, tag: tag, node: copy, value: value)
            result.linkAsNewest(copy)
            result.count += 1
            result.totalCost += cost
            if node.expiry != .max { result.expiringCount += 1 }
            index = newer(than: index)
        }
        return result
    }

    /// A description of the first broken invariant, or `nil` when the list is sound. O(n); for tests.
    func invariantViolation() -> String? {
        var seen = [Bool](repeating: false, count: nodes.count)
        var sequences = Set<UInt64>()
        var live = 0
        var cost = 0
        var expiring = 0
        var previous = SecondChanceList.none
        var index = newest
        while index != SecondChanceList.none {
            guard index >= 0, index < nodes.count, !seen[index] else { return "bad or repeated index \(index)" }
            seen[index] = true
            let node = nodes[index]
            guard let key = node.key else { return "live node \(index) is empty" }
            guard Int(links[index].newer) == previous else { return "node \(index) has the wrong newer link" }
            guard node.stamp >> 1 < nextSequence, sequences.insert(node.stamp >> 1).inserted else {
                return "node \(index) has a repeated or future sequence number"
            }
            guard links[index].tag == Self.tag(of: key), find(key) == index else {
                return "node \(index) is not indexed"
            }
            live += 1
            cost += links[index].cost
            if node.expiry != .max { expiring += 1 }
            previous = index
            index = Int(links[index].older)
        }
        guard previous == oldest else { return "oldest is not the end of the queue" }
        guard live == count, cost == totalCost, expiring == expiringCount else { return "wrong totals" }
        var free = firstFree
        while free != SecondChanceList.none {
            guard free >= 0, free < nodes.count, !seen[free] else { return "bad free slot \(free)" }
            seen[free] = true
            guard nodes[free].key == nil else { return "free slot \(free) holds data" }
            free = Int(links[free].older)
        }
        guard seen.allSatisfy({ $0 }) else { return "a slot is neither live nor free" }
        return indexViolation()
    }
}

extension SecondChanceList: Sendable where Key: Sendable, Value: Sendable {}

extension SecondChanceList.Node: Sendable where Key: Sendable, Value: Sendable {}

extension SecondChanceList.Link: Sendable {}
