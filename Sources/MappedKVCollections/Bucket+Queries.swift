import MappedKV

// Queries over a bucket's indexes. A query reads the indexes and then the entries they name; if
// anything changed in between (a write by any thread or process), it runs again, and after a few
// tries it runs inside the store's exclusive section, so every page is one state of the store.
extension Bucket {
    /// The entries `query` selects, in its order, one page at a time.
    ///
    /// ```swift
    /// let recent = try posts.query(
    ///     Query(where: [.greater("likes", .int(10))], orderBy: "created", descending: true, limit: 20))
    /// let next = try posts.query(
    ///     Query(where: [.greater("likes", .int(10))], orderBy: "created", descending: true, limit: 20,
    ///           after: recent.cursor))
    /// ```
    ///
    /// A query of several groups (``Query/init(anyOf:orderBy:descending:limit:after:)``) selects
    /// the entries meeting at least one group, each once, in the same order and pages.
    ///
    /// - Throws: ``CollectionError/unknownIndex(bucket:name:)`` for a condition (in any group) or
    ///   order on an index the bucket does not have.
    @_specialize(exported:false,where Value == [UInt8])
    public func query(_ query: Query) throws(CollectionError) -> QueryPage<Value> {
        for _ in 0..<4 {
            try indexes.synchronize()
            let (before, rows) = try selectRows(query)
            let page = try fetch(rows, query)
            if store.isMultiProcess {
                do { try store.synchronizeChanges() } catch { throw .store(error) }
            }
            let after = indexes.state.withLock { $0.changes }
            if before == after, let page { return page }
        }
        // Writers kept changing the bucket: read it inside the exclusive section, where nothing can.
        return try indexes.inSection { (_) throws(CollectionError) -> QueryPage<Value> in
            let (_, rows) = try selectRows(query)
            guard let page = try fetch(rows, query) else {
                throw .store(.invalidArgument("entries changed inside the exclusive section"))
            }
            return page
        }
    }

    /// The number of entries meeting every condition.
    public func count(where conditions: [QueryCondition]) throws(CollectionError) -> Int {
        try indexes.synchronize()
        let bucket = self.name
        if conditions.isEmpty { return try count }
        return try indexes.state.withLock { (state) throws(CollectionError) -> Int in
            guard let set = state.buckets[ExactString(bucket)] else {
                throw .unknownIndex(bucket: bucket, name: conditions[0].indexName)
            }
            return try set.count(conditions)
        }
    }

    /// The number of entries meeting every condition of at least one of `groups` (each counted
    /// once): `count(anyOf: [[.equal("tag", .string("a"))], [.greater("likes", .int(9))]])`. No
    /// group at all counts none; an empty group counts every entry.
    ///
    /// - Throws: ``CollectionError/unknownIndex(bucket:name:)`` for a condition, in any group, on
    ///   an index the bucket does not have.
    public func count(anyOf groups: [[QueryCondition]]) throws(CollectionError) -> Int {
        if groups.count == 1 { return try count(where: groups[0]) }
        try indexes.synchronize()
        let bucket = self.name
        let conditions = groups.flatMap { $0 }
        if conditions.isEmpty { return groups.isEmpty ? 0 : try count }
        return try indexes.state.withLock { (state) throws(CollectionError) -> Int in
            guard let set = state.buckets[ExactString(bucket)] else {
                throw .unknownIndex(bucket: bucket, name: conditions[0].indexName)
            }
            return try set.count(anyOf: groups)
        }
    }

    /// The change count and the selected keys (one more than the limit) under the index lock.
    private func selectRows(_ query: Query) throws(CollectionError) -> (UInt64, [(key: String, value: IndexValue?)]) {
        let bucket = self.name
        let selected = try indexes.state.withLock {
            (state) throws(CollectionError) -> (UInt64, [(key: String, value: IndexValue?)])? in
            guard let set = state.buckets[ExactString(bucket)] else { return nil }
            return (state.changes, try set.run(query))
        }
        if let selected { return selected }
        // A bucket without indexes can only be listed by key.
        if let first = query.groups.lazy.flatMap({ $0 }).first {
            throw .unknownIndex(bucket: bucket, name: first.indexName)
        }
        if let order = query.order { throw .unknownIndex(bucket: bucket, name: order) }
        let changes = indexes.state.withLock { $0.changes }
        // No group at all selects nothing; any other query here is of empty groups, met by every entry.
        if query.groups.isEmpty { return (changes, []) }
        var keys = try keys()
        if query.descending { keys.reverse() }
        if let after = query.after?.key {
            keys = keys.filter {
                query.descending
                    ? $0.utf8.lexicographicallyPrecedes(after.utf8) : after.utf8.lexicographicallyPrecedes($0.utf8)
            }
        }
        return (changes, keys.prefix(query.limit.map { $0 + 1 } ?? Int.max).map { ($0, nil) })
    }

    /// The entries of `rows` up to the limit and the cursor after them; nil if one is gone.
    private func fetch(
        _ rows: [(key: String, value: IndexValue?)], _ query: Query
    ) throws(CollectionError) -> QueryPage<Value>? {
        let pageRows = query.limit.map { rows.prefix($0) } ?? rows[...]
        // One store call reads the page: every payload is from one state of the store.
        // The store keys as bytes, end to end: no `String` per key.
        var storeKeys = PackedKeys(reservingCapacity: pageRows.count, bytesPerKey: 32)
        var prefix = keyPrefix
        prefix.withUTF8 { head in
            for row in pageRows { storeKeys.append(UnsafeRawBufferPointer(head), row.key) }
        }
        var entries: [Entry<Value>] = []
        entries.reserveCapacity(pageRows.count)
        if cachesEntries {
            let payloads: [[UInt8]?]
            do { payloads = try store.payloads(forKeys: storeKeys) } catch { throw .store(error) }
            for (row, stored) in zip(pageRows, payloads) {
                guard let stored else {
                    forget(row.key)
                    return nil
                }
                entries.append(try entry(stored: stored, key: row.key))
            }
        } else {
            // No cache to check against the stored bytes: the records are read where they lie, up
            // to the first that is gone or malformed. Values are decoded after, outside the store's
            // lock, except raw bytes, whose entries are made at once (their decoding is the copy).
            var records: [EntryRecord] = []
            records.reserveCapacity(storesRawBytes ? 0 : pageRows.count)
            var stop: (position: Int, error: EntryRecordError?)?
            let firstRow = pageRows.startIndex
            let name = self.name
            let raw = storesRawBytes
            do {
                try store.withPayloads(forKeys: storeKeys) { position, payload in
                    guard stop == nil else { return }
                    guard let payload else {
                        stop = (position, nil)
                        return
                    }
                    do throws(EntryRecordError) {
                        guard raw else { return records.append(try EntryRecord(decoding: payload)) }
                        let view = try EntryRecordView(payload)
                        // `Value` is `[UInt8]` here (`storesRawBytes`): the cast costs nothing once specialized.
                        guard let value = Array(view.valueBytes) as? Value else {
                            throw EntryRecordError("raw bytes where the bucket's values are not bytes")
                        }
                        entries.append(
                            Entry(
                                bucket: name, key: pageRows[firstRow + position].key, value: value,
                                metadata: try view.metadata(), created: EntryRecord.date(view.createdMilliseconds),
                                modified: EntryRecord.date(view.modifiedMilliseconds)))
                    } catch {
                        stop = (position, error)
                    }
                }
            } catch {
                throw .store(error)
            }
            if let stop {
                guard let error = stop.error else { return nil }
                let key = pageRows[firstRow + stop.position].key
                throw .malformedEntry(bucket: name, key: key, reason: "\(error)")
            }
            for (row, record) in zip(pageRows, records) { entries.append(try entry(of: record, key: row.key)) }
        }
        let more = query.limit.map { rows.count > $0 } ?? false
        let cursor = more ? pageRows.last.map { QueryCursor(value: $0.value, key: $0.key) } : nil
        return QueryPage(entries: entries, cursor: cursor)
    }
}
