// The entries of `MemoryCache` in recency order.
//
// Invariant: the live nodes form one doubly linked list from `mostRecent` to `leastRecent` in which
// no node was used later than the node before it; every other slot of `nodes` is on the free list and
// holds neither key nor value; each live node is found through exactly one slot of the key index (see
// LRUList+Index.swift); `count`, `totalCost` and `expiringCount` describe exactly the live nodes.

/// The entries of a cache, most recently used first, with a hash index from key to entry.
///
/// Everything lives in three arrays: the nodes, their links (kept apart so that relinking touches
/// little memory) and the index's slots. Nodes refer to each other by index and freed nodes are reused
/// through a free list, so once the arrays have grown, no operation allocates.
@usableFromInline
struct LRUList<Key: Hashable, Value> {
    /// One entry, or a free slot (no key, no value).
    @usableFromInline
    struct Node {
        /// The entry's key; `nil` in a free slot.
        @usableFromInline var key: Key?
        /// The 32 bits of the key's hash that the index keeps.
        @usableFromInline var tag: UInt32
        /// The entry's value; `nil` in a free slot.
        @usableFromInline var value: Value?
        /// The cost the entry was stored with.
        @usableFromInline var cost: Int
        /// When the entry was stored or last read, in nanoseconds of the cache's clock.
        @usableFromInline var lastAccess: Int64
        /// When the entry expires, in nanoseconds of the cache's clock; `Int64.max` for never.
        @usableFromInline var expiry: Int64

        /// Makes a live node.
        @inlinable
        init(key: Key?, tag: UInt32, value: Value?, cost: Int, lastAccess: Int64, expiry: Int64) {
            self.key = key
            self.tag = tag
            self.value = value
            self.cost = cost
            self.lastAccess = lastAccess
            self.expiry = expiry
        }
    }

    /// The neighbours of a node; in a free slot, `older` is the next free slot.
    @usableFromInline
    struct Link {
        /// The next more recently used node, or `LRUList.none`.
        @usableFromInline var newer: Int32
        /// The next less recently used node, or `LRUList.none`.
        @usableFromInline var older: Int32

        /// Makes a link between `newer` and `older`.
        @inlinable
        init(newer: Int32, older: Int32) {
            self.newer = newer
            self.older = older
        }
    }

    /// The index that stands for no node.
    @inlinable static var none: Int { -1 }

    /// Every node, live or free.
    @usableFromInline var nodes: ContiguousArray<Node> = []
    /// The links of every node, at the same indices as `nodes`.
    @usableFromInline var links: ContiguousArray<Link> = []
    /// The key index: open addressing with linear probing (see LRUList+Index.swift).
    @usableFromInline var slots: ContiguousArray<UInt64> = []
    /// The most recently used node, or `none` when the list is empty.
    @usableFromInline var mostRecent = LRUList.none
    /// The least recently used node, or `none` when the list is empty.
    @usableFromInline var leastRecent = LRUList.none
    /// The first free slot, or `none`.
    @usableFromInline var firstFree = LRUList.none
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

    /// The value of the live node at `index`.
    @inlinable
    func value(at index: Int) -> Value { nodes[index].value! }

    /// The cost of the live node at `index`.
    @inlinable
    func cost(at index: Int) -> Int { nodes[index].cost }

    /// When the live node at `index` was stored or last read.
    @inlinable
    func lastAccess(at index: Int) -> Int64 { nodes[index].lastAccess }

    /// When the live node at `index` expires; `Int64.max` for never.
    @inlinable
    func expiry(at index: Int) -> Int64 { nodes[index].expiry }

    /// The next more recently used node after the one at `index`, or `none`.
    @inlinable
    func newer(than index: Int) -> Int { Int(links[index].newer) }

    /// Stores `value` for `key` as the most recently used entry and returns the value it replaced.
    ///
    /// - Precondition: `time` is no earlier than the `lastAccess` of every live node.
    @inlinable
    mutating func store(_ value: Value, forKey key: Key, cost: Int, time: Int64, expiry: Int64) -> Value? {
        let tag = Self.tag(of: key)
        growIndexIfNeeded()
        switch findSlot(for: key, tag: tag) {
        case .found(let index):
            totalCost += cost - nodes[index].cost
            if nodes[index].expiry != .max { expiringCount -= 1 }
            if expiry != .max { expiringCount += 1 }
            let old = nodes[index].value.take()
            nodes[index].value = value
            nodes[index].cost = cost
            nodes[index].expiry = expiry
            touch(index, time: time)
            return old
        case .vacant(let slot):
            let index = allocate(key: key, tag: tag, value: value, cost: cost, lastAccess: time, expiry: expiry)
            occupy(slot, tag: tag, node: index)
            linkAsMostRecent(index)
            count += 1
            totalCost += cost
            if expiry != .max { expiringCount += 1 }
            return nil
        }
    }

    /// The live node holding `key`, or `nil`.
    @inlinable
    func find(_ key: Key) -> Int? {
        guard case .found(let index) = findSlot(for: key, tag: Self.tag(of: key)) else { return nil }
        return index
    }

    /// Records a read of the live node at `index` at `time` and makes it the most recently used one.
    ///
    /// - Precondition: `time` is no earlier than the `lastAccess` of every live node.
    @inlinable
    mutating func touch(_ index: Int, time: Int64) {
        nodes[index].lastAccess = time
        guard index != mostRecent else { return }
        // The hot path of every hit: one uniqueness check and no bounds checks for the four links it
        // rewrites, all of which belong to live nodes.
        var mostRecent = self.mostRecent
        var leastRecent = self.leastRecent
        links.withUnsafeMutableBufferPointer { links in
            let link = links[index]
            // Not the most recent node, so it has a newer neighbour.
            links[Int(link.newer)].older = link.older
            if link.older != Int32(LRUList.none) {
                links[Int(link.older)].newer = link.newer
            } else {
                leastRecent = Int(link.newer)
            }
            links[index] = Link(newer: Int32(LRUList.none), older: Int32(mostRecent))
            links[mostRecent].newer = Int32(index)
            mostRecent = index
        }
        self.mostRecent = mostRecent
        self.leastRecent = leastRecent
    }

    /// Unlinks the live node at `index`, drops it from the index, frees it and returns its key and value.
    @inlinable
    mutating func remove(_ index: Int) -> (key: Key, value: Value) {
        unlink(index)
        let (tag, cost, expiry) = (nodes[index].tag, nodes[index].cost, nodes[index].expiry)
        vacate(tag: tag, node: index)
        count -= 1
        totalCost -= cost
        if expiry != .max { expiringCount -= 1 }
        // One uniqueness check for both fields; `index` names a live node, so both are set.
        let (key, value) = nodes.withUnsafeMutableBufferPointer { nodes in
            (nodes[index].key.take()!, nodes[index].value.take()!)
        }
        links[index] = Link(newer: Int32(LRUList.none), older: Int32(firstFree))
        firstFree = index
        return (key, value)
    }

    /// Puts a live node made of the arguments in a free slot, or a new one, and returns its index.
    ///
    /// A free slot's fields are written one by one: assigning a whole `Node` goes through the
    /// generic type's value witnesses, which cost more than the rest of a store.
    @inlinable
    mutating func allocate(
        key: Key, tag: UInt32, value: Value, cost: Int, lastAccess: Int64, expiry: Int64
    ) -> Int {
        guard firstFree == LRUList.none else {
            let index = firstFree
            firstFree = Int(links[index].older)
            nodes.withUnsafeMutableBufferPointer { nodes in
                // A free slot: its key and value are nil, so nothing is released here.
                nodes[index].key = key
                nodes[index].tag = tag
                nodes[index].value = value
                nodes[index].cost = cost
                nodes[index].lastAccess = lastAccess
                nodes[index].expiry = expiry
            }
            return index
        }
        precondition(nodes.count < Int32.max, "MemoryCache: too many entries")
        nodes.append(Node(key: key, tag: tag, value: value, cost: cost, lastAccess: lastAccess, expiry: expiry))
        links.append(Link(newer: Int32(LRUList.none), older: Int32(LRUList.none)))
        return nodes.count - 1
    }

    /// Makes the unlinked node at `index` the most recently used one.
    @inlinable
    mutating func linkAsMostRecent(_ index: Int) {
        let mostRecent = self.mostRecent
        // Unchecked: `index` and `mostRecent` are nodes of the arrays.
        links.withUnsafeMutableBufferPointer { links in
            links[index] = Link(newer: Int32(LRUList.none), older: Int32(mostRecent))
            if mostRecent != LRUList.none { links[mostRecent].newer = Int32(index) }
        }
        if mostRecent == LRUList.none { leastRecent = index }
        self.mostRecent = index
    }

    /// Takes the live node at `index` out of the recency order, leaving its own links stale.
    @inlinable
    mutating func unlink(_ index: Int) {
        var mostRecent = self.mostRecent
        var leastRecent = self.leastRecent
        // Unchecked: a live node's links name live nodes or `none`.
        links.withUnsafeMutableBufferPointer { links in
            let link = links[index]
            if link.newer != Int32(LRUList.none) {
                links[Int(link.newer)].older = link.older
            } else {
                mostRecent = Int(link.older)
            }
            if link.older != Int32(LRUList.none) {
                links[Int(link.older)].newer = link.newer
            } else {
                leastRecent = Int(link.newer)
            }
        }
        self.mostRecent = mostRecent
        self.leastRecent = leastRecent
    }

    /// The live nodes' indices, least recently used first.
    var indicesLeastRecentFirst: [Int] {
        var result: [Int] = []
        result.reserveCapacity(count)
        var index = leastRecent
        while index != LRUList.none {
            result.append(index)
            index = newer(than: index)
        }
        return result
    }

    /// A copy of the live entries, in order, in arrays and an index just large enough for them.
    ///
    /// `self` is left with free slots only.
    mutating func compacted() -> LRUList {
        var result = LRUList()
        result.nodes.reserveCapacity(count)
        result.links.reserveCapacity(count)
        result.reserveIndexCapacity(count)
        var index = leastRecent
        while index != LRUList.none {
            let key = nodes[index].key.take()!
            let value = nodes[index].value.take()!
            let node = nodes[index]
            _ = result.store(value, forKey: key, cost: node.cost, time: node.lastAccess, expiry: node.expiry)
            index = newer(than: index)
        }
        return result
    }

    /// A description of the first broken invariant, or `nil` when the list is sound. O(n); for tests.
    func invariantViolation() -> String? {
        var seen = [Bool](repeating: false, count: nodes.count)
        var live = 0
        var cost = 0
        var expiring = 0
        var previous = LRUList.none
        var index = mostRecent
        while index != LRUList.none {
            guard index >= 0, index < nodes.count, !seen[index] else { return "bad or repeated index \(index)" }
            seen[index] = true
            let node = nodes[index]
            guard let key = node.key, node.value != nil else { return "live node \(index) is empty" }
            guard Int(links[index].newer) == previous else { return "node \(index) has the wrong newer link" }
            if previous != LRUList.none, nodes[previous].lastAccess < node.lastAccess {
                return "node \(index) was used later than the node before it"
            }
            guard node.tag == Self.tag(of: key), find(key) == index else { return "node \(index) is not indexed" }
            live += 1
            cost += node.cost
            if node.expiry != .max { expiring += 1 }
            previous = index
            index = Int(links[index].older)
        }
        guard previous == leastRecent else { return "leastRecent is not the end of the list" }
        guard live == count, cost == totalCost, expiring == expiringCount else { return "wrong totals" }
        var free = firstFree
        while free != LRUList.none {
            guard free >= 0, free < nodes.count, !seen[free] else { return "bad free slot \(free)" }
            seen[free] = true
            guard nodes[free].key == nil, nodes[free].value == nil else { return "free slot \(free) holds data" }
            free = Int(links[free].older)
        }
        guard seen.allSatisfy({ $0 }) else { return "a slot is neither live nor free" }
        return indexViolation()
    }
}

extension LRUList: Sendable where Key: Sendable, Value: Sendable {}

extension LRUList.Node: Sendable where Key: Sendable, Value: Sendable {}

extension LRUList.Link: Sendable {}
