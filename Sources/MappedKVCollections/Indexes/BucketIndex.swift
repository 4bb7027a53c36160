// One index of a bucket behind a type-erased face: the query engine and the index maintenance
// speak `IndexValue`; inside, values are kept as the index type's key (Int64, Double or UTF-8
// ordered String). The invariant: the index holds exactly the bucket's entries that have a value of
// its type, each once, at the position of (value, key).

/// What the rest of the module needs of one index.
protocol AnyBucketIndex: AnyObject {
    var definition: IndexDefinition { get }
    /// Entries with a value in this index.
    var count: Int { get }
    /// The value of entry `id`, if it has one.
    func value(of id: UInt32) -> IndexValue?
    /// Whether entry `id` meets `condition` (on this index).
    func meets(_ id: UInt32, _ condition: QueryCondition) -> Bool
    /// The entry other than `id` with this value, if any (for unique indexes).
    func otherEntry(with value: IndexValue, than id: UInt32?) -> UInt32?
    /// Calls `visit` with the entries meeting `conditions` (all on this index) in index order,
    /// starting after `cursor` if given, until it returns false.
    func walk(_ conditions: [QueryCondition], descending: Bool, after cursor: QueryCursor?, _ visit: (UInt32) -> Bool)
    /// The number of entries meeting `conditions` (all on this index), if they are ranges only
    /// (less, greater, equal and not equal).
    func rangeCount(_ conditions: [QueryCondition]) -> Int?
    /// Whether entry `a` comes before entry `b` in this index's order (by value, then by key);
    /// both have a value in the index.
    func precedes(_ a: UInt32, _ b: UInt32) -> Bool
    /// This index under another definition of the same type (to load without the unique check).
    func withDefinition(_ definition: IndexDefinition) -> any AnyBucketIndex
    /// Fills the empty index with (value, ID) pairs in one sort; returns two IDs that share a value
    /// if the index is unique and two do (the index is then discarded, not used).
    func load(_ values: [(IndexValue, UInt32)]) -> (UInt32, UInt32)?
}

/// An index whose values are kept as `K`. Its entry points are specialized for the three key
/// types: called through the existential, generic code would look up type metadata at run time.
final class BucketIndex<K: IndexKey>: AnyBucketIndex {
    let definition: IndexDefinition
    private let ordered: OrderedIndex<K>

    init(_ definition: IndexDefinition, table: KeyTable) {
        self.definition = definition
        self.ordered = OrderedIndex(table: table)
    }

    private init(_ definition: IndexDefinition, ordered: OrderedIndex<K>) {
        self.definition = definition
        self.ordered = ordered
    }

    func withDefinition(_ definition: IndexDefinition) -> any AnyBucketIndex {
        BucketIndex(definition, ordered: ordered)
    }

    var count: Int { ordered.count }

    private func key(_ value: IndexValue) -> K? { K(value, type: definition.type) }

    /// Sets the value of entry `id`, whose key's ``KeyPrefix`` is `prefix` (nil, or a value that
    /// does not fit the type: not in the index). Called through ``TypedBucketIndex``, so that it
    /// runs specialized.
    func set(_ value: IndexValue?, for id: UInt32, prefix: UInt64) {
        ordered.set(value.flatMap(key), for: id, prefix: prefix)
    }

    @_specialize(exported:false,where K == Int64)
    @_specialize(exported:false,where K == Double)
    @_specialize(exported:false,where K == UTF8Key)
    func value(of id: UInt32) -> IndexValue? { ordered.value(of: id)?.indexValue(type: definition.type) }

    @_specialize(exported:false,where K == Int64)
    @_specialize(exported:false,where K == Double)
    @_specialize(exported:false,where K == UTF8Key)
    func meets(_ id: UInt32, _ condition: QueryCondition) -> Bool {
        guard let stored = ordered.value(of: id) else { return false }
        return Self.meets(stored, condition, type: definition.type)
    }

    /// Whether `stored` meets `condition`; a bound that does not fit the type is never met.
    private static func meets(_ stored: K, _ condition: QueryCondition, type: IndexType) -> Bool {
        switch condition {
        case .equal(_, let value): return K(value, type: type).map { stored == $0 } ?? false
        case .notEqual(_, let value): return K(value, type: type).map { stored != $0 } ?? true
        case .less(_, let value): return K(value, type: type).map { stored < $0 } ?? false
        case .lessOrEqual(_, let value): return K(value, type: type).map { stored <= $0 } ?? false
        case .greater(_, let value): return K(value, type: type).map { stored > $0 } ?? false
        case .greaterOrEqual(_, let value): return K(value, type: type).map { stored >= $0 } ?? false
        case .prefix(_, let text):
            guard case .string(let string) = stored.indexValue(type: type) else { return false }
            return string.utf8.starts(with: text.utf8)
        case .oneOf(_, let values): return values.contains { K($0, type: type).map { stored == $0 } ?? false }
        }
    }

    @_specialize(exported:false,where K == Int64)
    @_specialize(exported:false,where K == Double)
    @_specialize(exported:false,where K == UTF8Key)
    func otherEntry(with value: IndexValue, than id: UInt32?) -> UInt32? {
        guard let key = key(value) else { return nil }
        var found: UInt32?
        ordered.forEachAscending(from: ordered.position(atOrAfter: key, inclusive: true), to: ordered.end) {
            stored, other in
            guard stored == key else { return false }
            if other != id {
                found = other
                return false
            }
            return true
        }
        return found
    }

    /// The lowest and highest bounds the range conditions set: (value, inclusive) each.
    private func bounds(_ conditions: [QueryCondition]) -> (lower: (K, Bool)?, upper: (K, Bool)?, empty: Bool) {
        var lower: (K, Bool)?
        var upper: (K, Bool)?
        var empty = false
        func raise(_ key: K, _ inclusive: Bool) {
            if let current = lower, current.0 > key || (current.0 == key && !current.1) { return }
            lower = (key, inclusive)
        }
        func lowerUpper(_ key: K, _ inclusive: Bool) {
            if let current = upper, current.0 < key || (current.0 == key && !current.1) { return }
            upper = (key, inclusive)
        }
        for condition in conditions {
            switch condition {
            case .equal(_, let value):
                guard let key = key(value) else {
                    empty = true
                    continue
                }
                raise(key, true)
                lowerUpper(key, true)
            case .less(_, let value):
                if let key = key(value) { lowerUpper(key, false) } else { empty = true }
            case .lessOrEqual(_, let value):
                if let key = key(value) { lowerUpper(key, true) } else { empty = true }
            case .greater(_, let value):
                if let key = key(value) { raise(key, false) } else { empty = true }
            case .greaterOrEqual(_, let value):
                if let key = key(value) { raise(key, true) } else { empty = true }
            case .prefix(_, let text):
                if let key = K(.string(text), type: definition.type) { raise(key, true) } else { empty = true }
            case .oneOf, .notEqual: break
            }
        }
        return (lower, upper, empty)
    }

    /// Whether `key` is past the upper bound.
    private static func isAbove(_ key: K, _ upper: (K, Bool)?) -> Bool {
        guard let upper else { return false }
        return upper.1 ? key > upper.0 : key >= upper.0
    }

    private static func isBelow(_ key: K, _ lower: (K, Bool)?) -> Bool {
        guard let lower else { return false }
        return lower.1 ? key < lower.0 : key <= lower.0
    }

    @_specialize(exported:false,where K == Int64)
    @_specialize(exported:false,where K == Double)
    @_specialize(exported:false,where K == UTF8Key)
    func walk(
        _ conditions: [QueryCondition], descending: Bool, after cursor: QueryCursor?, _ visit: (UInt32) -> Bool
    ) {
        let (lower, upper, empty) = bounds(conditions)
        guard !empty else { return }
        let type = definition.type
        let residual = conditions.filter {
            if case .prefix = $0 { return true }
            if case .oneOf = $0 { return true }
            return false
        }
        let cursorKey = cursor?.value.flatMap { K($0, type: type) }
        // Values a not-equal condition leaves out are stepped over, not read one by one: the walk
        // stops at the first element of one and starts again past its last.
        let excluded = Self.excluded(conditions, type: type)
        if !descending {
            var from = lower.map { ordered.position(atOrAfter: $0.0, inclusive: $0.1) } ?? ordered.start
            if let cursor, let cursorKey {
                let afterCursor = ordered.position(atOrAfter: cursorKey, key: cursor.key, inclusive: false)
                if afterCursor > from { from = afterCursor }
            }
            while true {
                var skip: K?
                ordered.forEachAscending(from: from, to: ordered.end) { key, id in
                    if Self.isAbove(key, upper) { return false }
                    if !excluded.isEmpty, excluded.contains(key) {
                        skip = key
                        return false
                    }
                    // A prefix range ends at the first string without the prefix.
                    for condition in residual where !Self.meets(key, condition, type: type) {
                        if case .prefix = condition { return false }
                        return true
                    }
                    return visit(id)
                }
                guard let skip else { return }
                from = ordered.position(atOrAfter: skip, inclusive: false)
            }
        } else {
            var to = upper.map { ordered.position(atOrAfter: $0.0, inclusive: !$0.1) } ?? ordered.end
            if let cursor, let cursorKey {
                // Entries strictly before (value, key): the position of the first at or after it.
                let atCursor = ordered.position(atOrAfter: cursorKey, key: cursor.key, inclusive: true)
                if atCursor < to { to = atCursor }
            }
            while true {
                var skip: K?
                ordered.forEachDescending(from: ordered.start, to: to) { key, id in
                    if Self.isBelow(key, lower) { return false }
                    if !excluded.isEmpty, excluded.contains(key) {
                        skip = key
                        return false
                    }
                    for condition in residual where !Self.meets(key, condition, type: type) { return true }
                    return visit(id)
                }
                guard let skip else { return }
                to = ordered.position(atOrAfter: skip, inclusive: true)
            }
        }
    }

    /// The values the not-equal conditions of `conditions` leave out (bounds not of the type leave
    /// out nothing), each once.
    private static func excluded(_ conditions: [QueryCondition], type: IndexType) -> [K] {
        var values: [K] = []
        for case .notEqual(_, let value) in conditions {
            if let key = K(value, type: type), !values.contains(key) { values.append(key) }
        }
        return values
    }

    @_specialize(exported:false,where K == Int64)
    @_specialize(exported:false,where K == Double)
    @_specialize(exported:false,where K == UTF8Key)
    func rangeCount(_ conditions: [QueryCondition]) -> Int? {
        for condition in conditions {
            if case .prefix = condition { return nil }
            if case .oneOf = condition { return nil }
        }
        let (lower, upper, empty) = bounds(conditions)
        if empty { return 0 }
        let from = lower.map { ordered.position(atOrAfter: $0.0, inclusive: $0.1) } ?? ordered.start
        let to = upper.map { ordered.position(atOrAfter: $0.0, inclusive: !$0.1) } ?? ordered.end
        var total = ordered.distance(from: from, to: to)
        // Each value left out that lies in the range takes its elements away.
        for value in Self.excluded(conditions, type: definition.type)
        where !Self.isBelow(value, lower) && !Self.isAbove(value, upper) {
            total -= ordered.distance(
                from: ordered.position(atOrAfter: value, inclusive: true),
                to: ordered.position(atOrAfter: value, inclusive: false))
        }
        return max(0, total)
    }

    @_specialize(exported:false,where K == Int64)
    @_specialize(exported:false,where K == Double)
    @_specialize(exported:false,where K == UTF8Key)
    func precedes(_ a: UInt32, _ b: UInt32) -> Bool {
        let first = ordered.value(of: a)
        let second = ordered.value(of: b)
        if let first, let second, first != second { return first < second }
        return ordered.table.key(of: a).utf8.lexicographicallyPrecedes(ordered.table.key(of: b).utf8)
    }

    @_specialize(exported:false,where K == Int64)
    @_specialize(exported:false,where K == Double)
    @_specialize(exported:false,where K == UTF8Key)
    func load(_ values: [(IndexValue, UInt32)]) -> (UInt32, UInt32)? {
        let type = definition.type
        ordered.load(values.compactMap { value, id in K(value, type: type).map { (value: $0, id: id) } })
        return definition.isUnique ? ordered.firstDuplicate() : nil
    }

}

/// An index with its key type known, for the calls every put makes: through the existential,
/// `BucketIndex`'s generic entry point looks type metadata up at run time on each call; through a
/// case of this, the call is to the code specialized for the type (`tools/bench.sh --collections`'s puts).
enum TypedBucketIndex {
    case int(BucketIndex<Int64>)
    case double(BucketIndex<Double>)
    case string(BucketIndex<UTF8Key>)

    /// The typed face of `index` (every index ``makeIndex(_:table:)`` makes has one).
    init(_ index: any AnyBucketIndex) {
        if let index = index as? BucketIndex<Int64> {
            self = .int(index)
        } else if let index = index as? BucketIndex<Double> {
            self = .double(index)
        } else if let index = index as? BucketIndex<UTF8Key> {
            self = .string(index)
        } else {
            preconditionFailure("an index of an unknown key type")
        }
    }

    /// Sets the value of entry `id` (nil: not in the index); `prefix` is the entry key's
    /// ``KeyPrefix``, computed once for all the indexes.
    func set(_ value: IndexValue?, for id: UInt32, prefix: UInt64) {
        switch self {
        case .int(let index): index.set(value, for: id, prefix: prefix)
        case .double(let index): index.set(value, for: id, prefix: prefix)
        case .string(let index): index.set(value, for: id, prefix: prefix)
        }
    }

    /// ``AnyBucketIndex/walk(_:descending:after:_:)``, called on the specialized index.
    func walk(_ conditions: [QueryCondition], descending: Bool, after cursor: QueryCursor?, _ visit: (UInt32) -> Bool) {
        switch self {
        case .int(let index): index.walk(conditions, descending: descending, after: cursor, visit)
        case .double(let index): index.walk(conditions, descending: descending, after: cursor, visit)
        case .string(let index): index.walk(conditions, descending: descending, after: cursor, visit)
        }
    }
}

/// A new index of the type its definition names.
func makeIndex(_ definition: IndexDefinition, table: KeyTable) -> any AnyBucketIndex {
    switch definition.type {
    case .int, .date: BucketIndex<Int64>(definition, table: table)
    case .double: BucketIndex<Double>(definition, table: table)
    case .string: BucketIndex<UTF8Key>(definition, table: table)
    }
}
