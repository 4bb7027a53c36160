import Dispatch

// The indexes of one bucket and the IDs of its entries, with the query engine over them. The
// invariant: every entry of the bucket that exists in the store has an ID in `table`, and each index
// holds each such entry's value for it (none when the entry has no value of the index's type).

/// An index computed by a closure in this process only.
struct ClosureIndex: Sendable {
    var definition: IndexDefinition
    var extract: @Sendable (EntryRecord, String) -> IndexValue?
}

/// A bucket's indexes. Unchecked `Sendable`: it is only ever used under the mutex of
/// ``CollectionIndexes/state`` (or before it is put there).
final class BucketIndexSet: @unchecked Sendable {
    let bucket: String
    let table = KeyTable()
    private(set) var indexes: [String: any AnyBucketIndex] = [:] { didSet { arrange() } }
    private(set) var closures: [String: ClosureIndex] = [:] { didSet { arrange() } }
    // Every access is under the mutex of ``CollectionIndexes/state``. Release builds skip the
    // exclusivity checks on `typed` and `plan` (read by every put) and `typedByName` (by every
    // query); debug builds keep them, so that the tests would catch an overlapping access.

    /// The indexes in the fixed order of ``values(of:key:)``, each with its closure if it has one
    /// (made again whenever `indexes` or `closures` change).
    private var arranged: [(index: any AnyBucketIndex, closure: ClosureIndex?)] = []
    /// The indexes of ``arranged``, typed for the puts' and removals' calls.
    #if !DEBUG
    @exclusivity(unchecked)
    #endif
    private var typed: [TypedBucketIndex] = []
    /// The indexes by name, typed for the queries' walks.
    #if !DEBUG
    @exclusivity(unchecked)
    #endif
    private(set) var typedByName: [String: TypedBucketIndex] = [:]
    /// Whether any index is unique (a put of a set without one checks nothing).
    private var hasUniqueIndex = false
    /// How ``values(of:key:)`` reads the stored indexes of ``arranged``.
    #if !DEBUG
    @exclusivity(unchecked)
    #endif
    private var plan = ExtractionPlan([])
    /// The bucket's keys in order, once a page of keys was asked for in this process (then kept
    /// by every put and removal, and rebuilt with the indexes).
    private(set) var keyOrder: KeyOrder?

    init(bucket: String) { self.bucket = bucket }

    private func arrange() {
        let names = indexes.keys.sorted()
        arranged = names.compactMap { name in indexes[name].map { ($0, closures[name]) } }
        typed = arranged.map { TypedBucketIndex($0.index) }
        typedByName = Dictionary(uniqueKeysWithValues: zip(names, typed))
        hasUniqueIndex = indexes.values.contains { $0.definition.isUnique }
        plan = ExtractionPlan(arranged.map(\.index.definition)) { arranged[$0].closure != nil }
    }

    var definitions: [IndexDefinition] { indexes.values.map(\.definition).sorted { $0.name < $1.name } }

    /// The values `record` (of `key`) has for each index, in the order of ``arranged`` (the
    /// order stays until an index is added or removed, which a put's exclusive section excludes).
    func values(of record: EntryRecord, key: String) -> [IndexValue?] {
        var values: [IndexValue?] = []
        self.values(of: record, key: key, into: &values)
        return values
    }

    /// ``values(of:key:)`` written into `values` (overwritten in place when it has the right count).
    func values(of record: EntryRecord, key: String, into values: inout [IndexValue?]) {
        record.valueBytes.withUnsafeBytes { bytes in
            plan.values(valueBytes: bytes, into: &values) { position in
                let (index, closure) = arranged[position]
                return closure.map { $0.extract(record, key) } ?? IndexExtraction.value(index.definition, of: record)
            }
        }
    }

    /// The first unique index on which another entry already has `values`' value, if any.
    func uniqueConflict(_ values: [IndexValue?], key: String) -> (index: String, other: String)? {
        guard hasUniqueIndex else { return nil }
        let id = table.id(of: key)
        for ((index, _), value) in zip(arranged, values) where index.definition.isUnique {
            if let value, let other = index.otherEntry(with: value, than: id) {
                return (index.definition.name, table.key(of: other))
            }
        }
        return nil
    }

    /// The first unique index on which a batch of entries would give two entries one value, with
    /// each other or with entries outside the batch.
    func batchConflict(_ records: [(key: String, record: EntryRecord)]) -> (index: String, key: String, other: String)?
    {
        // Keys by their bytes, as the store tells them apart.
        let batchKeys = Set(records.map { ExactString($0.key) })
        for (position, (index, _)) in arranged.enumerated() where index.definition.isUnique {
            let name = index.definition.name
            var seen: [IndexValue: ExactString] = [:]
            var counted: Set<ExactString> = []
            for (key, record) in records.reversed() {
                // Only a key's last record counts: the batch overwrites the earlier ones.
                let exact = ExactString(key)
                guard counted.insert(exact).inserted, let value = values(of: record, key: key)[position] else {
                    continue
                }
                if let holder = seen[value], holder != exact { return (name, key, holder.string) }
                seen[value] = exact
            }
            for (value, key) in seen {
                if let other = index.otherEntry(with: value, than: table.id(of: key.string)),
                    !batchKeys.contains(ExactString(table.key(of: other)))
                {
                    return (name, key.string, table.key(of: other))
                }
            }
        }
        return nil
    }

    /// Records that `key` now holds `record` (nil: removed).
    func apply(_ record: EntryRecord?, key: String) {
        guard let record else {
            guard let id = table.id(of: key) else { return }
            let prefix = KeyPrefix.of(key)
            for index in typed { index.set(nil, for: id, prefix: prefix) }
            keyOrder?.remove(id, prefix: prefix)
            table.release(key)
            return
        }
        apply(values(of: record, key: key), key: key)
    }

    /// Records that `key` now has `values` (as ``values(of:key:)`` gave them).
    func apply(_ values: [IndexValue?], key: String) {
        let id = table.assign(key)
        let prefix = KeyPrefix.of(key)
        // By position over the two arrays: a zip would retain each index on the way.
        for position in 0..<min(typed.count, values.count) {
            typed[position].set(values[position], for: id, prefix: prefix)
        }
        keyOrder?.insert(id, prefix: prefix)
    }

    /// Adds an index and fills it from `entries` (every entry of the bucket); returns the first
    /// pair of keys that share a value if the index is unique and two do (then nothing is added).
    func add(
        _ definition: IndexDefinition, closure: ClosureIndex?, entries: [(key: String, record: EntryRecord)]
    ) -> (String, String)? {
        let index = makeIndex(definition, table: table)
        var values: [(IndexValue, UInt32)] = []
        values.reserveCapacity(entries.count)
        for (key, record) in entries {
            let id = table.assign(key)
            let value = closure.map { $0.extract(record, key) } ?? IndexExtraction.value(definition, of: record)
            if let value { values.append((value, id)) }
        }
        if let (first, second) = index.load(values) { return (table.key(of: first), table.key(of: second)) }
        indexes[definition.name] = index
        if let closure { closures[definition.name] = closure } else { closures[definition.name] = nil }
        return nil
    }

    /// Adds stored indexes whose (value, ID) columns were read at open (every entry's key already
    /// has its ID). Uniqueness was enforced when the entries were written, so it is not checked.
    /// The indexes are sorted on parallel threads: each fills its own structure and only reads
    /// the key table, which nothing changes meanwhile.
    func load(_ definitions: [IndexDefinition], columns: [[(IndexValue, UInt32)]]) {
        let loaded = definitions.map { definition in
            var unchecked = definition
            unchecked.isUnique = false
            return makeIndex(unchecked, table: table)
        }
        let count = min(loaded.count, columns.count)
        if count > 1 {
            let work = ParallelLoad(indexes: loaded, columns: columns)
            DispatchQueue.concurrentPerform(iterations: count) { which in
                _ = work.indexes[which].load(work.columns[which])
            }
        } else if count == 1 {
            _ = loaded[0].load(columns[0])
        }
        for (definition, index) in zip(definitions, loaded) {
            indexes[definition.name] = index.withDefinition(definition)
        }
    }

    /// Drops the index `name`.
    func removeIndex(_ name: String) {
        indexes[name] = nil
        closures[name] = nil
    }

    /// A set with the same indexes (stored and closure) and no entries, for a bucket emptied.
    func emptied() -> BucketIndexSet {
        let set = BucketIndexSet(bucket: bucket)
        for name in indexes.keys.sorted() {
            guard let definition = indexes[name]?.definition else { continue }
            _ = set.add(definition, closure: closures[name], entries: [])
        }
        if keyOrder != nil { set.orderKeys() }
        return set
    }

    /// Orders the bucket's keys (every key the table has), kept from now on by each change.
    func orderKeys() {
        guard keyOrder == nil else { return }
        let order = KeyOrder(table: table)
        order.load(table.assignedIDs)
        keyOrder = order
    }

    /// The first `limit` keys after `key` (from the first if nil) in UTF-8 byte order, or nil if
    /// the keys are not ordered (``orderKeys()`` was not called).
    func keys(after key: String?, limit: Int) -> [String]? {
        guard let keyOrder else { return nil }
        let ids = keyOrder.ids(after: key, limit: limit)
        table.touchKeys(of: ids)
        return ids.map { table.key(of: $0) }
    }

    // MARK: Queries

    /// The keys of the entries `query` selects, in order, at most `limit + 1` of them (one more
    /// than a page, to tell whether another page follows), with their ordering values where a
    /// cursor needs one: the last entry of a page (the one at `limit - 1`).
    func run(_ query: Query) throws(CollectionError) -> [(key: String, value: IndexValue?)] {
        guard query.groups.count == 1 else { return try runAnyOf(query) }
        for condition in query.conditions where indexes[condition.indexName] == nil {
            throw .unknownIndex(bucket: bucket, name: condition.indexName)
        }
        let want = query.limit.map { $0 + 1 } ?? Int.max
        guard want > 0 else { return [] }
        var result: [(key: String, value: IndexValue?)] = []
        if let orderName = query.order {
            guard let order = typedByName[orderName] else { throw .unknownIndex(bucket: bucket, name: orderName) }
            let own = query.conditions.filter { $0.indexName == orderName }
            let others = query.conditions.filter { $0.indexName != orderName }
            let cursorRow = query.limit.map { $0 - 1 }
            // The IDs first, then their keys: the key reads (a cache miss each in a large bucket)
            // do not wait on the walk, and are in flight together.
            var ids: [UInt32] = []
            ids.reserveCapacity(min(want, 64))
            order.walk(own, descending: query.descending, after: query.after) { id in
                guard others.isEmpty || meetsAll(id, others) else { return true }
                ids.append(id)
                return ids.count < want
            }
            table.touchKeys(of: ids)
            result.reserveCapacity(ids.count)
            for (row, id) in ids.enumerated() {
                result.append((table.key(of: id), row == cursorRow ? indexes[orderName]?.value(of: id) : nil))
            }
            return result
        }
        // Ordered by key: the candidates of the first condition's index, or every entry.
        var keys: [String] = []
        if let first = query.conditions.first, let index = indexes[first.indexName] {
            let own = query.conditions.filter { $0.indexName == first.indexName }
            let others = query.conditions.filter { $0.indexName != first.indexName }
            index.walk(own, descending: false, after: nil) { id in
                if meetsAll(id, others) { keys.append(table.key(of: id)) }
                return true
            }
        } else {
            keys = Array(table.assignedKeys)
        }
        return Self.keyOrderedPage(of: keys, for: query, want: want)
    }

    /// The page of a query ordered by key, from every matching key (in any order): sorted by their
    /// UTF-8 bytes in the query's direction, after its cursor, the first `want` of them.
    static func keyOrderedPage(
        of keys: [String], for query: Query, want: Int
    ) -> [(key: String, value: IndexValue?)] {
        var keys = keys
        keys.sort {
            query.descending ? $1.utf8.lexicographicallyPrecedes($0.utf8) : $0.utf8.lexicographicallyPrecedes($1.utf8)
        }
        if let after = query.after?.key {
            keys = keys.filter {
                query.descending
                    ? $0.utf8.lexicographicallyPrecedes(after.utf8) : after.utf8.lexicographicallyPrecedes($0.utf8)
            }
        }
        return keys.prefix(want).map { ($0, nil) }
    }

    /// The number of entries meeting `conditions`.
    func count(_ conditions: [QueryCondition]) throws(CollectionError) -> Int {
        for condition in conditions where indexes[condition.indexName] == nil {
            throw .unknownIndex(bucket: bucket, name: condition.indexName)
        }
        guard let first = conditions.first, let index = indexes[first.indexName] else { return table.count }
        if conditions.allSatisfy({ $0.indexName == first.indexName }), let count = index.rangeCount(conditions) {
            return count
        }
        let own = conditions.filter { $0.indexName == first.indexName }
        let others = conditions.filter { $0.indexName != first.indexName }
        var count = 0
        index.walk(own, descending: false, after: nil) { id in
            if meetsAll(id, others) { count += 1 }
            return true
        }
        return count
    }

    func meetsAll(_ id: UInt32, _ conditions: [QueryCondition]) -> Bool {
        conditions.allSatisfy { indexes[$0.indexName]?.meets(id, $0) ?? false }
    }
}

/// The new indexes of a load and their columns, handed to parallel threads. Unchecked `Sendable`:
/// each thread fills only its own index, and the key table they read is not changed meanwhile.
private struct ParallelLoad: @unchecked Sendable {
    let indexes: [any AnyBucketIndex]
    let columns: [[(IndexValue, UInt32)]]
}
