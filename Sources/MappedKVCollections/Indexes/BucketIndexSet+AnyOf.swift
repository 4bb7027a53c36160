// Queries and counts of several groups of conditions (an OR of ANDs) over one bucket's indexes.
// The invariant: the rows are the entries meeting at least one group, each once, in the query's
// order (ties by key), after its cursor, at most `limit + 1` of them: the rows a query of one group
// would give if the union of the groups' entries were its matches. A page reads at most
// `limit + 1` entries of each group, never the whole result.

extension BucketIndexSet {
    /// ``run(_:)`` for a query of any number of groups but one.
    func runAnyOf(_ query: Query) throws(CollectionError) -> [(key: String, value: IndexValue?)] {
        try checkIndexes(of: query.groups)
        if let order = query.order, indexes[order] == nil { throw .unknownIndex(bucket: bucket, name: order) }
        let want = query.limit.map { $0 + 1 } ?? Int.max
        guard want > 0, !query.groups.isEmpty else { return [] }
        // A group of no condition is met by every entry: the query is that group alone.
        if query.groups.contains(where: \.isEmpty) {
            var every = query
            every.groups = [[]]
            return try run(every)
        }
        if let orderName = query.order, let order = typedByName[orderName], let orderIndex = indexes[orderName] {
            // Each group's first `want` entries in the order, each group on its own walk of the
            // ordering index from the cursor: the union's first `want` entries are among them.
            var streams: [[UInt32]] = []
            for group in query.groups {
                let own = group.filter { $0.indexName == orderName }
                let others = group.filter { $0.indexName != orderName }
                var ids: [UInt32] = []
                ids.reserveCapacity(min(want, 64))
                order.walk(own, descending: query.descending, after: query.after) { id in
                    guard others.isEmpty || meetsAll(id, others) else { return true }
                    ids.append(id)
                    return ids.count < want
                }
                streams.append(ids)
            }
            let ids = Self.merge(streams, want: want) { a, b in
                query.descending ? orderIndex.precedes(b, a) : orderIndex.precedes(a, b)
            }
            table.touchKeys(of: ids)
            let cursorRow = query.limit.map { $0 - 1 }
            return ids.enumerated().map { row, id in
                (table.key(of: id), row == cursorRow ? orderIndex.value(of: id) : nil)
            }
        }
        // Ordered by key: every match, once, sorted (as a query of one group ordered by key does).
        var keys: [String] = []
        forEachMatch(of: query.groups) { id in keys.append(table.key(of: id)) }
        return Self.keyOrderedPage(of: keys, for: query, want: want)
    }

    /// The number of entries meeting at least one of `groups`.
    func count(anyOf groups: [[QueryCondition]]) throws(CollectionError) -> Int {
        try checkIndexes(of: groups)
        if groups.isEmpty { return 0 }
        if groups.contains(where: \.isEmpty) { return table.count }
        if groups.count == 1 { return try count(groups[0]) }
        var total = 0
        forEachMatch(of: groups) { _ in total += 1 }
        return total
    }

    /// Throws ``CollectionError/unknownIndex(bucket:name:)`` for the first condition on an index the
    /// bucket does not have, in any group.
    private func checkIndexes(of groups: [[QueryCondition]]) throws(CollectionError) {
        for group in groups {
            for condition in group where indexes[condition.indexName] == nil {
                throw .unknownIndex(bucket: bucket, name: condition.indexName)
            }
        }
    }

    /// Calls `body` once with each entry meeting at least one of `groups` (none empty), in no
    /// particular order. Each group walks the index of its conditions that holds the fewest
    /// candidates; an entry met by an earlier group is marked in a bitmap of IDs and not given again.
    private func forEachMatch(of groups: [[QueryCondition]], _ body: (UInt32) -> Void) {
        var seen = [UInt64](repeating: 0, count: (table.keys.count + 63) / 64)
        for group in groups {
            guard let name = narrowestIndex(of: group), let index = typedByName[name] else { continue }
            let own = group.filter { $0.indexName == name }
            let others = group.filter { $0.indexName != name }
            index.walk(own, descending: false, after: nil) { id in
                guard others.isEmpty || meetsAll(id, others) else { return true }
                let word = Int(id >> 6)
                let bit = UInt64(1) << UInt64(id & 63)
                guard word < seen.count, seen[word] & bit == 0 else { return true }
                seen[word] |= bit
                body(id)
                return true
            }
        }
    }

    /// The index among those `group`'s conditions are on whose conditions leave the fewest
    /// entries (counted without a walk where they are ranges; else the index's size).
    private func narrowestIndex(of group: [QueryCondition]) -> String? {
        var best: (name: String, size: Int)?
        for name in Set(group.map(\.indexName)).sorted() {
            guard let index = indexes[name] else { continue }
            let size = index.rangeCount(group.filter { $0.indexName == name }) ?? index.count
            if best.map({ size < $0.size }) ?? true { best = (name, size) }
        }
        return best?.name
    }

    /// The first `want` IDs of the ordered `streams` together, in order, each once: a k-way merge
    /// that takes the smallest head each step. An entry in several streams is at the head of each
    /// of them at once (every ID before it in a stream comes before it in the order), so it is
    /// taken from all of them in one step.
    static func merge(_ streams: [[UInt32]], want: Int, precedes: (UInt32, UInt32) -> Bool) -> [UInt32] {
        if streams.count == 1 { return Array(streams[0].prefix(want)) }
        var heads = [Int](repeating: 0, count: streams.count)
        var merged: [UInt32] = []
        merged.reserveCapacity(min(want, streams.reduce(0) { $0 + $1.count }))
        while merged.count < want {
            var best: UInt32?
            for (stream, ids) in streams.enumerated() where heads[stream] < ids.count {
                let head = ids[heads[stream]]
                if let current = best, !precedes(head, current) { continue }
                best = head
            }
            guard let best else { break }
            for (stream, ids) in streams.enumerated() where heads[stream] < ids.count && ids[heads[stream]] == best {
                heads[stream] += 1
            }
            merged.append(best)
        }
        return merged
    }
}
