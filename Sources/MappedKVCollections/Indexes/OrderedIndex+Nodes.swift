// The leaves and groups of an ordered index: taking a node from its pool and giving it back,
// putting an element into a leaf and taking one out, splitting a full leaf or group in halves, and
// dropping an empty leaf. The invariant these keep: every group slot holds its leaf's last element,
// every top slot its group's last element, `groupCounts` the number of elements under each group,
// and every pool slot past a node's elements holds the placeholder (so that a freed node keeps no
// string alive).

extension OrderedIndex {
    /// A free leaf, from the pool's free list or a new one at the pool's end.
    func newLeaf() -> Int {
        if let reused = freeLeaves.popLast() { return Int(reused) }
        let leaf = leafCounts.count
        leafCounts.append(0)
        leafValues.append(contentsOf: repeatElement(K.placeholder, count: Self.leafCapacity))
        leafPrefixes.append(contentsOf: repeatElement(0, count: Self.leafCapacity))
        leafIDs.append(contentsOf: repeatElement(0, count: Self.leafCapacity))
        return leaf
    }

    /// A free group, from the pool's free list or a new one at the pool's end.
    func newGroup() -> Int {
        if let reused = freeGroups.popLast() { return Int(reused) }
        let group = groupSizes.count
        groupSizes.append(0)
        groupCounts.append(0)
        groupLeaves.append(contentsOf: repeatElement(0, count: Self.groupCapacity))
        groupValues.append(contentsOf: repeatElement(K.placeholder, count: Self.groupCapacity))
        groupPrefixes.append(contentsOf: repeatElement(0, count: Self.groupCapacity))
        groupIDs.append(contentsOf: repeatElement(0, count: Self.groupCapacity))
        return group
    }

    /// Puts `element` at `offset` of `leaf`, which has room, moving up the elements from there.
    func putInLeaf(_ leaf: Int, at offset: Int, _ element: Element) {
        let count = Int(leafCounts[leaf])
        let start = leaf * Self.leafCapacity + offset
        let end = leaf * Self.leafCapacity + count
        Self.put(element.value, into: &leafValues, at: start, end: end)
        Self.put(element.prefix, into: &leafPrefixes, at: start, end: end)
        Self.put(element.id, into: &leafIDs, at: start, end: end)
        leafCounts[leaf] = Int32(count + 1)
    }

    /// Takes out the element at `offset` of `leaf`, moving down the elements after it.
    func takeFromLeaf(_ leaf: Int, at offset: Int) {
        let start = leaf * Self.leafCapacity + offset
        let end = leaf * Self.leafCapacity + Int(leafCounts[leaf])
        Self.closeGap(&leafValues, at: start, end: end, placeholder: K.placeholder)
        Self.closeGap(&leafPrefixes, at: start, end: end, placeholder: 0)
        Self.closeGap(&leafIDs, at: start, end: end, placeholder: 0)
        leafCounts[leaf] -= 1
    }

    /// Copies the last element of the leaf at `slot` of the group at `order` (which is not empty)
    /// to its group slot, and to the group's top slot if it is the group's last leaf.
    func refreshLast(group order: Int, slot: Int) {
        let group = Int(topGroups[order])
        let at = group * Self.groupCapacity + slot
        let leaf = Int(groupLeaves[at])
        let last = leaf * Self.leafCapacity + Int(leafCounts[leaf]) - 1
        groupValues[at] = leafValues[last]
        groupPrefixes[at] = leafPrefixes[last]
        groupIDs[at] = leafIDs[last]
        if slot == Int(groupSizes[group]) - 1 {
            topValues[order] = leafValues[last]
            topPrefixes[order] = leafPrefixes[last]
            topIDs[order] = leafIDs[last]
        }
    }

    /// Splits the full leaf at `slot` of the group at `order`: its upper half goes to a new leaf in
    /// the next slot; a group that fills up is split in turn.
    func splitLeaf(group order: Int, slot: Int) {
        let group = Int(topGroups[order])
        let leaf = Int(groupLeaves[group * Self.groupCapacity + slot])
        let right = newLeaf()
        let half = Int(leafCounts[leaf]) / 2
        let moved = Int(leafCounts[leaf]) - half
        Self.move(
            &leafValues, from: leaf * Self.leafCapacity + half, to: right * Self.leafCapacity, count: moved,
            placeholder: K.placeholder)
        Self.move(
            &leafPrefixes, from: leaf * Self.leafCapacity + half, to: right * Self.leafCapacity, count: moved,
            placeholder: 0)
        Self.move(
            &leafIDs, from: leaf * Self.leafCapacity + half, to: right * Self.leafCapacity, count: moved, placeholder: 0
        )
        leafCounts[leaf] = Int32(half)
        leafCounts[right] = Int32(moved)
        // The new leaf's slot, after the split one's.
        let start = group * Self.groupCapacity + slot + 1
        let end = group * Self.groupCapacity + Int(groupSizes[group])
        Self.openGap(&groupLeaves, at: start, end: end)
        Self.openGap(&groupValues, at: start, end: end)
        Self.openGap(&groupPrefixes, at: start, end: end)
        Self.openGap(&groupIDs, at: start, end: end)
        groupLeaves[start] = Int32(right)
        groupSizes[group] += 1
        refreshLast(group: order, slot: slot)
        refreshLast(group: order, slot: slot + 1)
        if Int(groupSizes[group]) == Self.groupCapacity { splitGroup(order) }
    }

    /// Splits the full group at `order`: its upper half of leaves goes to a new group after it.
    private func splitGroup(_ order: Int) {
        let group = Int(topGroups[order])
        let right = newGroup()
        let size = Int(groupSizes[group])
        let half = size / 2
        let moved = size - half
        let from = group * Self.groupCapacity + half
        let to = right * Self.groupCapacity
        var elements = 0
        for slot in 0..<moved { elements += Int(leafCounts[Int(groupLeaves[from + slot])]) }
        Self.move(&groupLeaves, from: from, to: to, count: moved, placeholder: 0)
        Self.move(&groupValues, from: from, to: to, count: moved, placeholder: K.placeholder)
        Self.move(&groupPrefixes, from: from, to: to, count: moved, placeholder: 0)
        Self.move(&groupIDs, from: from, to: to, count: moved, placeholder: 0)
        groupSizes[group] = Int32(half)
        groupSizes[right] = Int32(moved)
        groupCounts[group] -= elements
        groupCounts[right] = elements
        topGroups.insert(Int32(right), at: order + 1)
        topValues.insert(groupValues[to + moved - 1], at: order + 1)
        topPrefixes.insert(groupPrefixes[to + moved - 1], at: order + 1)
        topIDs.insert(groupIDs[to + moved - 1], at: order + 1)
        topValues[order] = groupValues[from - 1]
        topPrefixes[order] = groupPrefixes[from - 1]
        topIDs[order] = groupIDs[from - 1]
    }

    /// Gives back the empty leaf at `slot` of the group at `order`, and the group if that was its
    /// only leaf.
    func dropLeaf(group order: Int, slot: Int) {
        let group = Int(topGroups[order])
        let start = group * Self.groupCapacity + slot
        let end = group * Self.groupCapacity + Int(groupSizes[group])
        freeLeaves.append(groupLeaves[start])
        Self.closeGap(&groupLeaves, at: start, end: end, placeholder: 0)
        Self.closeGap(&groupValues, at: start, end: end, placeholder: K.placeholder)
        Self.closeGap(&groupPrefixes, at: start, end: end, placeholder: 0)
        Self.closeGap(&groupIDs, at: start, end: end, placeholder: 0)
        groupSizes[group] -= 1
        if groupSizes[group] == 0 {
            freeGroups.append(Int32(group))
            groupCounts[group] = 0
            topGroups.remove(at: order)
            topValues.remove(at: order)
            topPrefixes.remove(at: order)
            topIDs.remove(at: order)
        } else if slot == Int(groupSizes[group]) {
            refreshLast(group: order, slot: slot - 1)
        }
    }

    /// The number of elements in the leaf at `slot` of pool group `group`.
    func leafCount(group: Int, slot: Int) -> Int {
        Int(leafCounts[Int(groupLeaves[group * Self.groupCapacity + slot])])
    }

    // MARK: Moving elements within a pool

    /// Moves the elements at `start..<end` of `array` up by one (`end` is within the node).
    static func openGap<T>(_ array: inout [T], at start: Int, end: Int) {
        guard end > start else { return }
        array.withUnsafeMutableBufferPointer { buffer in
            guard let base = buffer.baseAddress else { return }
            precondition(start >= 0 && end < buffer.count, "a node has room for one more element")
            (base + start + 1).update(from: base + start, count: end - start)
        }
    }

    /// Moves the elements at `start..<end` of `array` up by one and puts `value` at `start`, with
    /// one uniqueness check of the array (`end` is within the node).
    static func put<T>(_ value: T, into array: inout [T], at start: Int, end: Int) {
        array.withUnsafeMutableBufferPointer { buffer in
            precondition(start >= 0 && start <= end && end < buffer.count, "a node has room for one more element")
            guard let base = buffer.baseAddress else { return }
            if end > start { (base + start + 1).update(from: base + start, count: end - start) }
            base[start] = value
        }
    }

    /// Moves the elements at `start + 1..<end` of `array` down by one and puts `placeholder` at
    /// `end - 1`.
    static func closeGap<T>(_ array: inout [T], at start: Int, end: Int, placeholder: T) {
        array.withUnsafeMutableBufferPointer { buffer in
            guard let base = buffer.baseAddress, end > start else { return }
            precondition(end <= buffer.count, "a node's elements lie within its pool")
            (base + start).update(from: base + start + 1, count: end - start - 1)
            base[end - 1] = placeholder
        }
    }

    /// Moves `count` elements from `from` to `to` (in another node) and puts `placeholder` where they were.
    static func move<T>(_ array: inout [T], from: Int, to: Int, count: Int, placeholder: T) {
        for index in 0..<count {
            array[to + index] = array[from + index]
            array[from + index] = placeholder
        }
    }
}
