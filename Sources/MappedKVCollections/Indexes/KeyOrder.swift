// A bucket's keys in order of their UTF-8 bytes, kept in memory so that a page of keys after a
// given key costs a walk down a tree and along one leaf, not a scan of the store. The invariant:
// while a bucket's index set has a key order, the order holds exactly the IDs its key table has
// assigned (every entry of the bucket with a well-formed record), each once.
//
// It is an ordered index whose values are all equal, so that its elements are ordered by key
// alone: by the 8-byte key prefix beside each element, and by the keys' bytes when the prefixes
// tie. It costs about 13 bytes an entry beside the key table, and one more tree insert for a
// put of a new key (a put that replaces an entry finds the ID in the order already, and stops).

/// The one value of a key order's elements: every element has it, so keys alone order them.
struct KeyOrderMark: IndexKey {
    init() {}

    /// Never made from a stored value: a key order is not queried by value.
    init?(_ value: IndexValue, type: IndexType) { return nil }

    func indexValue(type: IndexType) -> IndexValue { .int(0) }

    static var placeholder: KeyOrderMark { KeyOrderMark() }

    static func < (lhs: KeyOrderMark, rhs: KeyOrderMark) -> Bool { false }
}

/// The keys of a bucket's entries in UTF-8 byte order. Used only under the mutex of
/// ``CollectionIndexes/state``, like the index set that holds it.
final class KeyOrder {
    private let ordered: OrderedIndex<KeyOrderMark>

    /// An empty order over the keys of `table`.
    init(table: KeyTable) { ordered = OrderedIndex(table: table) }

    /// The number of keys in the order.
    var count: Int { ordered.count }

    /// Fills the empty order with `ids` (each assigned once in the table), in one sort.
    func load(_ ids: [UInt32]) { ordered.load(ids.map { (value: KeyOrderMark(), id: $0) }) }

    /// Adds the entry `id`, whose key's ``KeyPrefix`` is `prefix`; an ID in the order already
    /// stays where it is.
    func insert(_ id: UInt32, prefix: UInt64) { ordered.set(KeyOrderMark(), for: id, prefix: prefix) }

    /// Takes out the entry `id`, whose key's ``KeyPrefix`` is `prefix`.
    func remove(_ id: UInt32, prefix: UInt64) { ordered.set(nil, for: id, prefix: prefix) }

    /// The IDs of the first `limit` keys after `key` (from the first key if nil), in order.
    /// `key` need not be in the order: the page starts at the first key above it.
    func ids(after key: String?, limit: Int) -> [UInt32] {
        guard limit > 0 else { return [] }
        let from = key.map { ordered.position(atOrAfter: KeyOrderMark(), key: $0, inclusive: false) } ?? ordered.start
        var ids: [UInt32] = []
        ids.reserveCapacity(min(limit, 1_024))
        ordered.forEachAscending(from: from, to: ordered.end) { _, id in
            ids.append(id)
            return ids.count < limit
        }
        return ids
    }

    /// The first way the order breaks its tree's invariant (for tests).
    func structureProblem() -> String? { ordered.structureProblem() }
}
