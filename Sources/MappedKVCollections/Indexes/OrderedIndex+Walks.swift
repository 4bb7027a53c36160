// Reading an ordered index in order: counting the elements between two positions, visiting them
// ascending or descending, and the bulk load that builds a whole index from unsorted elements.
// Nothing here changes the order; the load fills an empty index.

extension OrderedIndex {
    /// The number of elements from `from` up to (not including) `to`: whole groups by their
    /// counts, and in the two end groups the leaves from whichever end of the group is nearer.
    func distance(from: Position, to: Position) -> Int {
        guard from < to, from.group < topGroups.count else { return 0 }
        let first = Int(topGroups[from.group])
        if from.group == to.group {
            return elementsBefore(group: first, slot: to.slot) + to.offset
                - elementsBefore(group: first, slot: from.slot) - from.offset
        }
        var total = groupCounts[first] - elementsBefore(group: first, slot: from.slot) - from.offset
        for order in (from.group + 1)..<min(to.group, topGroups.count) { total += groupCounts[Int(topGroups[order])] }
        if to.group < topGroups.count {
            total += elementsBefore(group: Int(topGroups[to.group]), slot: to.slot) + to.offset
        }
        return total
    }

    /// The number of elements in the leaves before `slot` of pool group `group`, counted from
    /// whichever end of the group is nearer.
    private func elementsBefore(group: Int, slot: Int) -> Int {
        let size = Int(groupSizes[group])
        var total = 0
        if slot <= size / 2 {
            for before in 0..<slot { total += leafCount(group: group, slot: before) }
            return total
        }
        for after in slot..<size { total += leafCount(group: group, slot: after) }
        return groupCounts[group] - total
    }

    /// Calls `body` with the elements from `from` up to `to`, ascending, until it returns false.
    func forEachAscending(from: Position, to: Position, _ body: (K, UInt32) -> Bool) {
        var position = from
        while position < to, position.group < topGroups.count {
            let group = Int(topGroups[position.group])
            let leaf = Int(groupLeaves[group * Self.groupCapacity + position.slot])
            let base = leaf * Self.leafCapacity
            let last =
                position.group == to.group && position.slot == to.slot ? to.offset : Int(leafCounts[leaf])
            for offset in position.offset..<max(position.offset, last)
            where !body(leafValues[base + offset], leafIDs[base + offset]) {
                return
            }
            position.offset = 0
            position.slot += 1
            if position.slot == Int(groupSizes[group]) {
                position.slot = 0
                position.group += 1
            }
        }
    }

    /// Calls `body` with the elements before `to` down to `from`, descending, until it returns false.
    func forEachDescending(from: Position, to: Position, _ body: (K, UInt32) -> Bool) {
        // `position` is just after the next element to visit.
        var position = to.group < topGroups.count ? to : end
        while true {
            if position.offset == 0 {
                if position.slot > 0 {
                    position.slot -= 1
                } else {
                    guard position.group > 0 else { return }
                    position.group -= 1
                    position.slot = Int(groupSizes[Int(topGroups[position.group])]) - 1
                }
                position.offset = leafCount(group: Int(topGroups[position.group]), slot: position.slot)
                continue
            }
            position.offset -= 1
            guard position >= from else { return }
            let leaf = Int(groupLeaves[Int(topGroups[position.group]) * Self.groupCapacity + position.slot])
            let at = leaf * Self.leafCapacity + position.offset
            if !body(leafValues[at], leafIDs[at]) { return }
        }
    }

    /// Fills an empty index with `elements` (each ID once) by one sort instead of one insert each:
    /// what building an index at open costs. The sort reads only the elements: each carries the
    /// first 8 bytes of its key as an integer, so only elements with equal values and equal key
    /// prefixes look their keys up (elements given in ID order, as at open, read the keys in order).
    func load(_ elements: [(value: K, id: UInt32)]) {
        precondition(count == 0 && topGroups.isEmpty, "load fills an empty index")
        if let highest = elements.lazy.map(\.id).max() { reserveValues(upTo: highest) }
        for element in elements { store(element.value, for: element.id) }
        let table = self.table
        var sorted = elements.map { (value: $0.value, prefix: KeyPrefix.of(table.key(of: $0.id)), id: $0.id) }
        sorted.sort { a, b in
            if a.value != b.value { return a.value < b.value }
            if a.prefix != b.prefix { return a.prefix < b.prefix }
            return table.key(of: a.id).utf8.lexicographicallyPrecedes(table.key(of: b.id).utf8)
        }
        // Leaves fifteen-sixteenths full and groups seven-eighths: room for later inserts without
        // leaving much of the pools empty.
        let perLeaf = Self.leafCapacity * 15 / 16
        let perGroup = Self.groupCapacity * 7 / 8
        let leaves = (sorted.count + perLeaf - 1) / perLeaf
        let groups = (leaves + perGroup - 1) / perGroup
        reservePools(leaves: leaves, groups: groups)
        var start = 0
        while start < sorted.count {
            if topGroups.isEmpty || Int(groupSizes[Int(topGroups[topGroups.count - 1])]) == perGroup {
                let group = newGroup()
                topGroups.append(Int32(group))
                topValues.append(K.placeholder)
                topPrefixes.append(0)
                topIDs.append(0)
            }
            let order = topGroups.count - 1
            let group = Int(topGroups[order])
            let leaf = newLeaf()
            let end = min(start + perLeaf, sorted.count)
            for (offset, element) in sorted[start..<end].enumerated() {
                leafValues[leaf * Self.leafCapacity + offset] = element.value
                leafPrefixes[leaf * Self.leafCapacity + offset] = element.prefix
                leafIDs[leaf * Self.leafCapacity + offset] = element.id
            }
            leafCounts[leaf] = Int32(end - start)
            let slot = Int(groupSizes[group])
            groupLeaves[group * Self.groupCapacity + slot] = Int32(leaf)
            groupSizes[group] += 1
            groupCounts[group] += end - start
            refreshLast(group: order, slot: slot)
            start = end
        }
        count = sorted.count
    }

    /// Reserves exactly the pools' room for `leaves` leaves and `groups` groups.
    private func reservePools(leaves: Int, groups: Int) {
        leafValues.reserveCapacity(leaves * Self.leafCapacity)
        leafPrefixes.reserveCapacity(leaves * Self.leafCapacity)
        leafIDs.reserveCapacity(leaves * Self.leafCapacity)
        leafCounts.reserveCapacity(leaves)
        groupLeaves.reserveCapacity(groups * Self.groupCapacity)
        groupValues.reserveCapacity(groups * Self.groupCapacity)
        groupPrefixes.reserveCapacity(groups * Self.groupCapacity)
        groupIDs.reserveCapacity(groups * Self.groupCapacity)
        groupSizes.reserveCapacity(groups)
        groupCounts.reserveCapacity(groups)
    }

    /// The first two IDs with the same value, in an index loaded by ``load(_:)`` (for unique indexes).
    func firstDuplicate() -> (UInt32, UInt32)? {
        var previous: (K, UInt32)?
        var duplicate: (UInt32, UInt32)?
        forEachAscending(from: start, to: end) { value, id in
            if let previous, previous.0 == value {
                duplicate = (previous.1, id)
                return false
            }
            previous = (value, id)
            return true
        }
        return duplicate
    }
}

extension OrderedIndex {
    /// The first way the tree breaks its invariant, or nil: each group slot holds its leaf's last
    /// element and each top slot its group's, no node is empty, `groupCounts` and `count` add up,
    /// and the elements are in order. For tests: it reads every element.
    func structureProblem() -> String? {
        var total = 0
        var previous: Element?
        for order in topGroups.indices {
            let group = Int(topGroups[order])
            let size = Int(groupSizes[group])
            guard size > 0 else { return "group \(order) is empty" }
            var elements = 0
            for slot in 0..<size {
                let at = group * Self.groupCapacity + slot
                let leaf = Int(groupLeaves[at])
                let leafSize = Int(leafCounts[leaf])
                guard leafSize > 0 else { return "leaf \(order).\(slot) is empty" }
                for offset in 0..<leafSize {
                    let at = leaf * Self.leafCapacity + offset
                    let element = Element(value: leafValues[at], prefix: leafPrefixes[at], id: leafIDs[at])
                    if let previous, !less(previous, element.value, element.prefix, element.id) {
                        return "element \(order).\(slot).\(offset) is out of order"
                    }
                    previous = element
                }
                let last = leaf * Self.leafCapacity + leafSize - 1
                guard groupValues[at] == leafValues[last], groupIDs[at] == leafIDs[last] else {
                    return "group slot \(order).\(slot) does not hold its leaf's last element"
                }
                elements += leafSize
            }
            let last = group * Self.groupCapacity + size - 1
            guard topValues[order] == groupValues[last], topIDs[order] == groupIDs[last] else {
                return "top slot \(order) does not hold its group's last element"
            }
            guard groupCounts[group] == elements else {
                return "group \(order) counts \(groupCounts[group]), holds \(elements)"
            }
            total += elements
        }
        return total == count ? nil : "count is \(count), the leaves hold \(total)"
    }
}
