// One secondary index in memory: every indexed entry's value with the entry's ID, kept in order of
// (value, key) in a tree of three levels: leaves of up to 64 elements, groups of up to 64 leaves,
// and one flat array of the groups' last elements on top. The invariant: the leaves, read group by
// group and slot by slot, are sorted by (value, key bytes) and hold exactly the entries whose
// `values[id]` is set; each group slot holds its leaf's last element and each top slot its group's
// last element; beside each element lies the first 8 bytes of its key (`KeyPrefix`), so that
// elements with equal values are ordered without reading their keys unless those 8 bytes are equal.
//
// Why this shape: at a million entries an index is larger than the processor's caches, so what an
// insert costs is the cache misses it waits for in turn. The top array (one element per ~3,000)
// stays cached; a group's and a leaf's elements lie in a few consecutive cache lines each, read
// all at once before their binary searches (`touch`), so an insert waits about twice (the group,
// the leaf), where a binary search through a chunk of hundreds waited once a probe. Leaves and
// groups live in pools (one array per field, a fixed number of slots per node), so a node costs no
// allocation of its own, and a split moves at most half a node.

/// The values of one index, ordered, with their entries' IDs.
final class OrderedIndex<K: IndexKey> {
    /// One element: an entry's value, the first 8 bytes of its key, its ID.
    struct Element {
        var value: K
        var prefix: UInt64
        var id: UInt32
    }

    /// Where an element is: its group's place in the order, its leaf's slot in the group, and its
    /// offset in the leaf. Positions order as their elements do; ``end`` is after every element.
    struct Position: Comparable {
        var group: Int
        var slot: Int
        var offset: Int

        static func < (a: Position, b: Position) -> Bool {
            (a.group, a.slot, a.offset) < (b.group, b.slot, b.offset)
        }
    }

    /// Elements a leaf holds at most, and leaves a group holds at most. A node that fills up is
    /// split in halves at once, so every node has room for one more.
    static var leafCapacity: Int { 64 }
    static var groupCapacity: Int { 64 }

    // An index is only used under the mutex of its ``CollectionIndexes``. Release builds skip the
    // exclusivity checks on the arrays an insert, a removal or a walk reads (dozens a put: the put
    // of `tools/bench.sh --collections`); debug builds keep them, so that the tests
    // would catch an overlapping access. The free lists, read only when a node is made or
    // emptied, keep their checks in every build.

    /// The leaf pool: leaf `n` keeps its elements at `n * leafCapacity ..< n * leafCapacity + leafCounts[n]`
    /// of the three element arrays.
    #if !DEBUG
    @exclusivity(unchecked)
    #endif
    var leafValues: [K] = []
    #if !DEBUG
    @exclusivity(unchecked)
    #endif
    var leafPrefixes: [UInt64] = []
    #if !DEBUG
    @exclusivity(unchecked)
    #endif
    var leafIDs: [UInt32] = []
    #if !DEBUG
    @exclusivity(unchecked)
    #endif
    var leafCounts: [Int32] = []
    var freeLeaves: [Int32] = []

    /// The group pool: group `n` keeps, for each of its `groupSizes[n]` leaves in order, the leaf's
    /// number and its last element at `n * groupCapacity + slot`; `groupCounts[n]` counts the
    /// elements in its leaves.
    #if !DEBUG
    @exclusivity(unchecked)
    #endif
    var groupLeaves: [Int32] = []
    #if !DEBUG
    @exclusivity(unchecked)
    #endif
    var groupValues: [K] = []
    #if !DEBUG
    @exclusivity(unchecked)
    #endif
    var groupPrefixes: [UInt64] = []
    #if !DEBUG
    @exclusivity(unchecked)
    #endif
    var groupIDs: [UInt32] = []
    #if !DEBUG
    @exclusivity(unchecked)
    #endif
    var groupSizes: [Int32] = []
    #if !DEBUG
    @exclusivity(unchecked)
    #endif
    var groupCounts: [Int] = []
    var freeGroups: [Int32] = []

    /// The top: the groups in order (their numbers in the pool) and each one's last element.
    #if !DEBUG
    @exclusivity(unchecked)
    #endif
    var topGroups: [Int32] = []
    #if !DEBUG
    @exclusivity(unchecked)
    #endif
    var topValues: [K] = []
    #if !DEBUG
    @exclusivity(unchecked)
    #endif
    var topPrefixes: [UInt64] = []
    #if !DEBUG
    @exclusivity(unchecked)
    #endif
    var topIDs: [UInt32] = []

    /// The value of each ID's entry, valid where `present` has the ID's bit: a value and a bit per
    /// entry instead of an optional, which would take twice the bytes.
    #if !DEBUG
    @exclusivity(unchecked)
    #endif
    private var values: [K] = []
    #if !DEBUG
    @exclusivity(unchecked)
    #endif
    private var present: [UInt64] = []
    /// The number of elements.
    #if !DEBUG
    @exclusivity(unchecked)
    #endif
    var count = 0
    /// The sum of what the last ``touch`` read; nothing reads it (it is stored so that the compiler
    /// keeps the reads).
    #if !DEBUG
    @exclusivity(unchecked)
    #endif
    var touchedSum: UInt64 = 0
    let table: KeyTable

    init(table: KeyTable) { self.table = table }

    /// The value indexed for `id`.
    func value(of id: UInt32) -> K? { isPresent(id) ? values[Int(id)] : nil }

    private func isPresent(_ id: UInt32) -> Bool {
        let word = Int(id >> 6)
        return word < present.count && present[word] & (1 << UInt64(id & 63)) != 0
    }

    /// Reserves room for the values of IDs up to `highest`.
    func reserveValues(upTo highest: UInt32) {
        values.reserveCapacity(Int(highest) + 1)
        present.reserveCapacity(Int(highest) / 64 + 1)
    }

    /// Records the value of `id` (nil: none), growing the arrays to reach it.
    func store(_ value: K?, for id: UInt32) {
        let index = Int(id)
        let word = index >> 6
        if index == values.count, word <= present.count, let value {
            // The common case: a new entry's ID is the next one.
            values.append(value)
            if word == present.count {
                present.append(1 << UInt64(index & 63))
            } else {
                present[word] |= 1 << UInt64(index & 63)
            }
            return
        }
        if index == values.count {
            values.append(K.placeholder)
        } else if index > values.count {
            values.append(contentsOf: repeatElement(K.placeholder, count: index + 1 - values.count))
        }
        if word >= present.count { present.append(contentsOf: repeatElement(0, count: word + 1 - present.count)) }
        if let value {
            values[index] = value
            present[word] |= 1 << UInt64(index & 63)
        } else {
            values[index] = K.placeholder
            present[word] &= ~(1 << UInt64(index & 63))
        }
    }

    /// Whether `a` sorts before (b, its key's prefix, bID): by value, then by key bytes, read only
    /// when the prefixes are equal.
    @inline(__always)
    func less(_ a: Element, _ b: K, _ bPrefix: UInt64, _ bID: UInt32) -> Bool {
        if a.value != b { return a.value < b }
        if a.prefix != bPrefix { return a.prefix < bPrefix }
        if a.id == bID { return false }
        return table.key(of: a.id).utf8.lexicographicallyPrecedes(table.key(of: bID).utf8)
    }

    /// Sets the value of `id` (nil: not indexed), moving its element; `prefix` is its key's
    /// ``KeyPrefix`` when the caller has it.
    func set(_ value: K?, for id: UInt32, prefix: UInt64? = nil) {
        let old = self.value(of: id)
        if let old, let value, value == old { return }
        let prefix = prefix ?? KeyPrefix.of(table.key(of: id))
        if let old { remove(old, prefix, id) }
        store(value, for: id)
        if let value { insert(value, prefix, id) }
    }

    private func insert(_ value: K, _ prefix: UInt64, _ id: UInt32) {
        count += 1
        guard !topGroups.isEmpty else {
            let leaf = newLeaf()
            let group = newGroup()
            putInLeaf(leaf, at: 0, Element(value: value, prefix: prefix, id: id))
            groupLeaves[group * Self.groupCapacity] = Int32(leaf)
            groupSizes[group] = 1
            groupCounts[group] = 1
            topGroups = [Int32(group)]
            topValues = [value]
            topPrefixes = [prefix]
            topIDs = [id]
            refreshLast(group: 0, slot: 0)
            return
        }
        // The first element not before the new one, or the end of the last leaf.
        let target = Element(value: value, prefix: prefix, id: id)
        let (order, slot, offset) = locate(target, clamped: true) ?? (0, 0, 0)
        let group = Int(topGroups[order])
        let leaf = Int(groupLeaves[group * Self.groupCapacity + slot])
        putInLeaf(leaf, at: offset, Element(value: value, prefix: prefix, id: id))
        groupCounts[group] += 1
        if Int(leafCounts[leaf]) == Self.leafCapacity {
            splitLeaf(group: order, slot: slot)
        } else if offset == Int(leafCounts[leaf]) - 1 {
            refreshLast(group: order, slot: slot)
        }
    }

    private func remove(_ value: K, _ prefix: UInt64, _ id: UInt32) {
        guard let (order, slot, offset) = locate(Element(value: value, prefix: prefix, id: id), clamped: false)
        else { return }
        let group = Int(topGroups[order])
        let leaf = Int(groupLeaves[group * Self.groupCapacity + slot])
        guard offset < Int(leafCounts[leaf]), leafIDs[leaf * Self.leafCapacity + offset] == id else { return }
        count -= 1
        groupCounts[group] -= 1
        takeFromLeaf(leaf, at: offset)
        if leafCounts[leaf] == 0 {
            dropLeaf(group: order, slot: slot)
        } else if offset == Int(leafCounts[leaf]) {
            refreshLast(group: order, slot: slot)
        }
    }

    // MARK: Searches

    /// Where `target` is or would go: the first element not before it (group place, slot, offset).
    /// When every element is before it: the end of the last leaf if `clamped` (where an insert
    /// appends it), else nil.
    @inline(__always)
    private func locate(_ target: Element, clamped: Bool) -> (order: Int, slot: Int, offset: Int)? {
        descend(clamped: clamped) { values, prefixes, ids, index in
            // Written out so that an element's prefix and ID are read only when the values tie.
            let value = values[index]
            if value != target.value { return value < target.value }
            let prefix = prefixes[index]
            if prefix != target.prefix { return prefix < target.prefix }
            let id = ids[index]
            if id == target.id { return false }
            return table.key(of: id).utf8.lexicographicallyPrecedes(table.key(of: target.id).utf8)
        }
    }

    /// The position of the first element satisfying `isAtOrAfter` (monotone along the order), or
    /// ``end``. Inlined so that the predicate is too: called through a closure, every probe would
    /// retain and release the arrays it reads.
    @inline(__always)
    func firstPosition(where isAtOrAfter: (Element) -> Bool) -> Position {
        let found = descend(clamped: false) { values, prefixes, ids, index in
            !isAtOrAfter(Element(value: values[index], prefix: prefixes[index], id: ids[index]))
        }
        guard let (order, slot, offset) = found else { return end }
        return Position(group: order, slot: slot, offset: offset)
    }

    /// The walk from the top through a group to a leaf: at each level, a binary search for the
    /// first element that `isBefore` (false then true along the order: given pointers to a node's
    /// three arrays and an index from them) calls not before; a group's and a leaf's cache lines
    /// are read together first. When every element is before: the last leaf's end if `clamped`,
    /// else nil.
    @inline(__always)
    private func descend(
        clamped: Bool,
        _ isBefore: (
            _ values: UnsafePointer<K>, _ prefixes: UnsafePointer<UInt64>, _ ids: UnsafePointer<UInt32>, _ index: Int
        ) -> Bool
    ) -> (order: Int, slot: Int, offset: Int)? {
        // The first of `count` elements from `base` of one level's arrays that is not before,
        // searched over the arrays' storage (checked once here, not at every probe).
        @inline(__always)
        func firstNotBefore(_ values: [K], _ prefixes: [UInt64], _ ids: [UInt32], from base: Int, count: Int) -> Int {
            guard count > 0 else { return 0 }
            return values.withUnsafeBufferPointer { values in
                prefixes.withUnsafeBufferPointer { prefixes in
                    ids.withUnsafeBufferPointer { ids in
                        precondition(
                            base >= 0 && base + count <= values.count && base + count <= prefixes.count
                                && base + count <= ids.count, "a node lies within its level's arrays")
                        guard let values = values.baseAddress, let prefixes = prefixes.baseAddress,
                            let ids = ids.baseAddress
                        else { return 0 }
                        let nodeValues = values + base
                        let nodePrefixes = prefixes + base
                        let nodeIDs = ids + base
                        var low = 0
                        var high = count
                        while low < high {
                            let middle = (low &+ high) &>> 1
                            if isBefore(nodeValues, nodePrefixes, nodeIDs, middle) {
                                low = middle &+ 1
                            } else {
                                high = middle
                            }
                        }
                        return low
                    }
                }
            }
        }
        var order = firstNotBefore(topValues, topPrefixes, topIDs, from: 0, count: topGroups.count)
        if order == topGroups.count {
            guard clamped, order > 0 else { return nil }
            order -= 1
        }
        let group = Int(topGroups[order])
        let groupBase = group * Self.groupCapacity
        let size = Int(groupSizes[group])
        touchGroup(groupBase, size)
        let slot = min(firstNotBefore(groupValues, groupPrefixes, groupIDs, from: groupBase, count: size), size - 1)
        let leaf = Int(groupLeaves[groupBase + slot])
        let leafBase = leaf * Self.leafCapacity
        // The whole node, so that its lines need not wait for its count, read meanwhile.
        touchLeaf(leafBase, Self.leafCapacity)
        let leafSize = Int(leafCounts[leaf])
        return (order, slot, firstNotBefore(leafValues, leafPrefixes, leafIDs, from: leafBase, count: leafSize))
    }

    /// The sum of one byte of each cache line of `count` elements of `stride` bytes from `base`.
    /// Read before a node's binary search so that the search finds the node cached: the reads do
    /// not depend on each other, so the processor has them in flight together instead of waiting
    /// for one miss a probe.
    @inline(__always)
    static func lineSum(_ bytes: UnsafeRawBufferPointer, stride: Int, from base: Int, count: Int) -> UInt64 {
        var sum: UInt64 = 0
        var line = base * stride
        let end = min((base + count) * stride, bytes.count)
        while line < end {
            sum &+= UInt64(bytes[line])
            line += 64
        }
        return sum
    }

    /// Reads the cache lines of `count` elements from `base` of one level's three arrays.
    @inline(__always)
    private func touch(_ values: [K], _ prefixes: [UInt64], _ ids: [UInt32], _ base: Int, _ count: Int) {
        var sum = values.withUnsafeBytes {
            Self.lineSum($0, stride: MemoryLayout<K>.stride, from: base, count: count)
        }
        sum &+= prefixes.withUnsafeBytes { Self.lineSum($0, stride: 8, from: base, count: count) }
        sum &+= ids.withUnsafeBytes { Self.lineSum($0, stride: 4, from: base, count: count) }
        touchedSum = sum
    }

    /// Reads the cache lines of a leaf's `count` elements from `base` in the leaf pool.
    @inline(__always)
    private func touchLeaf(_ base: Int, _ count: Int) { touch(leafValues, leafPrefixes, leafIDs, base, count) }

    /// Reads the cache lines of a group's `count` slots from `base` in the group pool, its leaves'
    /// numbers included (which the descent reads next).
    @inline(__always)
    private func touchGroup(_ base: Int, _ count: Int) {
        touch(groupValues, groupPrefixes, groupIDs, base, count)
        touchedSum &+= groupLeaves.withUnsafeBytes { Self.lineSum($0, stride: 4, from: base, count: count) }
    }

    /// The position of the first element with a value not below `bound` (or above it, if not `inclusive`).
    func position(atOrAfter bound: K, inclusive: Bool) -> Position {
        firstPosition { inclusive ? $0.value >= bound : $0.value > bound }
    }

    /// The position of the first element at or after (value, key) in the order (or after it, if
    /// not `inclusive`).
    func position(atOrAfter value: K, key: String, inclusive: Bool) -> Position {
        let prefix = KeyPrefix.of(key)
        return firstPosition { element in
            if element.value != value { return element.value > value }
            if element.prefix != prefix { return element.prefix > prefix }
            let elementKey = table.key(of: element.id).utf8
            return inclusive
                ? !elementKey.lexicographicallyPrecedes(key.utf8) : key.utf8.lexicographicallyPrecedes(elementKey)
        }
    }

    /// The position after the last element.
    var end: Position { Position(group: topGroups.count, slot: 0, offset: 0) }
    /// The position of the first element.
    var start: Position { Position(group: 0, slot: 0, offset: 0) }
}
