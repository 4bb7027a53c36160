// One secondary index in memory: every indexed entry's value with the entry's ID, kept in order of
// (value, key) in chunks of a few hundred, so that an insert or a removal shifts one chunk, a range
// is found by two binary searches, and a count adds chunk sizes. The invariant: the chunks, read in
// order, are sorted by (value, key bytes) and hold exactly the entries whose `values[id]` is set;
// beside each element lies the first 8 bytes of its key (`KeyPrefix`), so that elements with equal
// values are ordered without reading their keys unless those 8 bytes are equal too.

/// A value type an index orders by.
protocol IndexKey: Comparable {
    /// The key for `value` of an index of `type`, or nil if the value cannot be one.
    init?(_ value: IndexValue, type: IndexType)
    /// The value as the public type.
    func indexValue(type: IndexType) -> IndexValue
    /// A value stored for IDs that have none (never read: `present` says which IDs have one).
    static var placeholder: Self { get }
}

/// The values of one index, ordered, with their entries' IDs.
final class OrderedIndex<K: IndexKey> {
    private struct Chunk {
        var keys: [K]
        var prefixes: [UInt64]
        var ids: [UInt32]
    }

    /// One element: an entry's value, the first 8 bytes of its key, its ID.
    struct Element {
        var value: K
        var prefix: UInt64
        var id: UInt32
    }

    /// Where an element is: chunk and offset within it.
    struct Position: Equatable {
        var chunk: Int
        var offset: Int
    }

    private static var chunkLimit: Int { 256 }
    // Unchecked exclusivity: an index is only used under the mutex of its ``CollectionIndexes``,
    // and the run-time checks cost more than the work of an insert.
    @exclusivity(unchecked) private var chunks: [Chunk] = []
    /// The last element of each chunk, in chunk order: the binary search for a chunk reads these
    /// three contiguous arrays instead of one heap block per chunk probed (a cache miss each).
    @exclusivity(unchecked) private var lastKeys: [K] = []
    @exclusivity(unchecked) private var lastPrefixes: [UInt64] = []
    @exclusivity(unchecked) private var lastIDs: [UInt32] = []
    /// The value of each ID's entry, valid where `present` has the ID's bit: a value and a bit per
    /// entry instead of an optional, which would take twice the bytes.
    @exclusivity(unchecked) private var values: [K] = []
    @exclusivity(unchecked) private var present: [UInt64] = []
    @exclusivity(unchecked) private(set) var count = 0
    let table: KeyTable

    init(table: KeyTable) { self.table = table }

    /// The value indexed for `id`.
    func value(of id: UInt32) -> K? { isPresent(id) ? values[Int(id)] : nil }

    private func isPresent(_ id: UInt32) -> Bool {
        let word = Int(id >> 6)
        return word < present.count && present[word] & (1 << UInt64(id & 63)) != 0
    }

    /// Records the value of `id` (nil: none), growing the arrays to reach it.
    private func store(_ value: K?, for id: UInt32) {
        let index = Int(id)
        if index >= values.count {
            values.append(contentsOf: repeatElement(K.placeholder, count: index + 1 - values.count))
        }
        let word = index >> 6
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
    private func less(_ a: Element, _ b: K, _ bPrefix: UInt64, _ bID: UInt32) -> Bool {
        if a.value != b { return a.value < b }
        if a.prefix != bPrefix { return a.prefix < bPrefix }
        if a.id == bID { return false }
        return table.key(of: a.id).utf8.lexicographicallyPrecedes(table.key(of: bID).utf8)
    }

    /// Sets the value of `id` (nil: not indexed), moving its element.
    func set(_ value: K?, for id: UInt32) {
        let old = self.value(of: id)
        if let old, let value, value == old { return }
        let prefix = KeyPrefix.of(table.key(of: id))
        if let old { remove(old, prefix, id) }
        store(value, for: id)
        if let value { insert(value, prefix, id) }
    }

    private func insert(_ value: K, _ prefix: UInt64, _ id: UInt32) {
        count += 1
        guard !chunks.isEmpty else {
            chunks = [Chunk(keys: [value], prefixes: [prefix], ids: [id])]
            lastKeys = [value]
            lastPrefixes = [prefix]
            lastIDs = [id]
            return
        }
        // The first chunk whose last element is not before the new one (else the last chunk).
        var low = 0
        var high = chunks.count - 1
        while low < high {
            let middle = (low + high) / 2
            let last = Element(value: lastKeys[middle], prefix: lastPrefixes[middle], id: lastIDs[middle])
            if less(last, value, prefix, id) {
                low = middle + 1
            } else {
                high = middle
            }
        }
        let offset = firstOffset(in: low) { !self.less($0, value, prefix, id) }
        chunks[low].keys.insert(value, at: offset)
        chunks[low].prefixes.insert(prefix, at: offset)
        chunks[low].ids.insert(id, at: offset)
        if chunks[low].keys.count > Self.chunkLimit {
            let half = chunks[low].keys.count / 2
            let upper = Chunk(
                keys: Array(chunks[low].keys[half...]), prefixes: Array(chunks[low].prefixes[half...]),
                ids: Array(chunks[low].ids[half...]))
            chunks[low].keys.removeSubrange(half...)
            chunks[low].prefixes.removeSubrange(half...)
            chunks[low].ids.removeSubrange(half...)
            chunks.insert(upper, at: low + 1)
            lastKeys.insert(K.placeholder, at: low + 1)
            lastPrefixes.insert(0, at: low + 1)
            lastIDs.insert(0, at: low + 1)
            updateLast(low + 1)
        }
        updateLast(low)
    }

    /// Copies the last element of chunk `index` (which is not empty) to the chunks' last elements.
    private func updateLast(_ index: Int) {
        let chunk = chunks[index]
        lastKeys[index] = chunk.keys[chunk.keys.count - 1]
        lastPrefixes[index] = chunk.prefixes[chunk.prefixes.count - 1]
        lastIDs[index] = chunk.ids[chunk.ids.count - 1]
    }

    private func remove(_ value: K, _ prefix: UInt64, _ id: UInt32) {
        guard let position = firstPosition(where: { !self.less($0, value, prefix, id) }),
            position.chunk < chunks.count, chunks[position.chunk].ids[position.offset] == id
        else { return }
        count -= 1
        chunks[position.chunk].keys.remove(at: position.offset)
        chunks[position.chunk].prefixes.remove(at: position.offset)
        chunks[position.chunk].ids.remove(at: position.offset)
        if chunks[position.chunk].keys.isEmpty {
            chunks.remove(at: position.chunk)
            lastKeys.remove(at: position.chunk)
            lastPrefixes.remove(at: position.chunk)
            lastIDs.remove(at: position.chunk)
        } else {
            updateLast(position.chunk)
        }
    }

    /// The first offset in chunk `index` whose element satisfies `isAtOrAfter` (a predicate that is
    /// false then true along the chunk), or the chunk's length.
    private func firstOffset(in index: Int, _ isAtOrAfter: (Element) -> Bool) -> Int {
        let chunk = chunks[index]
        var low = 0
        var high = chunk.keys.count
        while low < high {
            let middle = (low + high) / 2
            let element = Element(value: chunk.keys[middle], prefix: chunk.prefixes[middle], id: chunk.ids[middle])
            if isAtOrAfter(element) { high = middle } else { low = middle + 1 }
        }
        return low
    }

    /// The position of the first element satisfying `isAtOrAfter` (monotone along the order), or
    /// the end position (`chunk == chunks.count`).
    func firstPosition(where isAtOrAfter: (Element) -> Bool) -> Position? {
        var low = 0
        var high = chunks.count
        while low < high {
            let middle = (low + high) / 2
            if isAtOrAfter(Element(value: lastKeys[middle], prefix: lastPrefixes[middle], id: lastIDs[middle])) {
                high = middle
            } else {
                low = middle + 1
            }
        }
        guard low < chunks.count else { return Position(chunk: chunks.count, offset: 0) }
        return Position(chunk: low, offset: firstOffset(in: low, isAtOrAfter))
    }

    /// The position of the first element with a value not below `bound` (or above it, if not `inclusive`).
    func position(atOrAfter bound: K, inclusive: Bool) -> Position {
        firstPosition { inclusive ? $0.value >= bound : $0.value > bound } ?? end
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
        } ?? end
    }

    /// The position after the last element.
    var end: Position { Position(chunk: chunks.count, offset: 0) }
    /// The position of the first element.
    var start: Position { Position(chunk: 0, offset: 0) }

    /// The number of elements from `from` up to (not including) `to`.
    func distance(from: Position, to: Position) -> Int {
        guard from.chunk < to.chunk || (from.chunk == to.chunk && from.offset < to.offset) else { return 0 }
        if from.chunk == to.chunk { return to.offset - from.offset }
        var total = chunks[from.chunk].keys.count - from.offset
        for index in (from.chunk + 1)..<min(to.chunk, chunks.count) { total += chunks[index].keys.count }
        if to.chunk < chunks.count { total += to.offset }
        return total
    }

    /// Calls `body` with the elements from `from` up to `to`, ascending, until it returns false.
    func forEachAscending(from: Position, to: Position, _ body: (K, UInt32) -> Bool) {
        var position = from
        while position.chunk < to.chunk || (position.chunk == to.chunk && position.offset < to.offset) {
            guard position.chunk < chunks.count else { return }
            let chunk = chunks[position.chunk]
            let last = position.chunk == to.chunk ? to.offset : chunk.keys.count
            for offset in position.offset..<last where !body(chunk.keys[offset], chunk.ids[offset]) { return }
            position = Position(chunk: position.chunk + 1, offset: 0)
        }
    }

    /// Calls `body` with the elements before `to` down to `from`, descending, until it returns false.
    func forEachDescending(from: Position, to: Position, _ body: (K, UInt32) -> Bool) {
        var chunkIndex = min(to.chunk, chunks.count)
        var upper = to.chunk < chunks.count ? to.offset : 0
        if to.chunk >= chunks.count {
            chunkIndex = chunks.count - 1
            upper = chunkIndex >= 0 ? chunks[chunkIndex].keys.count : 0
        }
        while chunkIndex >= from.chunk && chunkIndex >= 0 {
            let chunk = chunks[chunkIndex]
            let lower = chunkIndex == from.chunk ? from.offset : 0
            var offset = upper - 1
            while offset >= lower {
                if !body(chunk.keys[offset], chunk.ids[offset]) { return }
                offset -= 1
            }
            chunkIndex -= 1
            if chunkIndex >= 0 { upper = chunks[chunkIndex].keys.count }
        }
    }

    /// Fills an empty index with `elements` (each ID once) by one sort instead of one insert each:
    /// what building an index at open costs. The sort reads only the elements: each carries the
    /// first 8 bytes of its key as an integer, so only elements with equal values and equal key
    /// prefixes look their keys up (elements given in ID order, as at open, read the keys in order).
    func load(_ elements: [(value: K, id: UInt32)]) {
        precondition(count == 0, "load fills an empty index")
        if let highest = elements.lazy.map(\.id).max() {
            values.reserveCapacity(Int(highest) + 1)
            present.reserveCapacity(Int(highest) / 64 + 1)
        }
        for element in elements { store(element.value, for: element.id) }
        let table = self.table
        var sorted = elements.map { (value: $0.value, prefix: KeyPrefix.of(table.key(of: $0.id)), id: $0.id) }
        sorted.sort { a, b in
            if a.value != b.value { return a.value < b.value }
            if a.prefix != b.prefix { return a.prefix < b.prefix }
            return table.key(of: a.id).utf8.lexicographicallyPrecedes(table.key(of: b.id).utf8)
        }
        // Chunks seven-eighths full, so that later inserts seldom split one.
        let size = Self.chunkLimit * 7 / 8
        chunks.reserveCapacity(sorted.count / size + 1)
        var start = 0
        while start < sorted.count {
            let end = min(start + size, sorted.count)
            let slice = sorted[start..<end]
            chunks.append(Chunk(keys: slice.map(\.value), prefixes: slice.map(\.prefix), ids: slice.map(\.id)))
            lastKeys.append(sorted[end - 1].value)
            lastPrefixes.append(sorted[end - 1].prefix)
            lastIDs.append(sorted[end - 1].id)
            start = end
        }
        count = sorted.count
    }

    /// The first two IDs with the same value, in an index loaded by ``load(_:)`` (for unique indexes).
    func firstDuplicate() -> (UInt32, UInt32)? {
        var previous: (K, UInt32)?
        for chunk in chunks {
            for offset in chunk.keys.indices {
                if let previous, previous.0 == chunk.keys[offset] { return (previous.1, chunk.ids[offset]) }
                previous = (chunk.keys[offset], chunk.ids[offset])
            }
        }
        return nil
    }

    /// Drops every element.
    func removeAll() {
        chunks = []
        lastKeys = []
        lastPrefixes = []
        lastIDs = []
        values = []
        present = []
        count = 0
    }
}

extension Int64: IndexKey {
    init?(_ value: IndexValue, type: IndexType) {
        switch (value, type) {
        case (.int(let number), .int): self = number
        case (.double(let number), .int):
            guard let exact = Int64(exactly: number) else { return nil }
            self = exact
        case (.date(let date), .date): self = EntryRecord.milliseconds(date)
        case (.int(let milliseconds), .date): self = milliseconds
        default: return nil
        }
    }

    func indexValue(type: IndexType) -> IndexValue { type == .date ? .date(EntryRecord.date(self)) : .int(self) }

    static var placeholder: Int64 { 0 }
}

extension Double: IndexKey {
    init?(_ value: IndexValue, type: IndexType) {
        switch value {
        case .double(let number) where !number.isNaN: self = number
        case .int(let number): self = Double(number)
        default: return nil
        }
    }

    func indexValue(type: IndexType) -> IndexValue { .double(self) }

    static var placeholder: Double { 0 }
}

/// A string ordered by its UTF-8 bytes (not by Unicode canonical order), the order the CLI and
/// every process agree on.
struct UTF8Key: IndexKey {
    var string: String

    init(_ string: String) { self.string = string }

    init?(_ value: IndexValue, type: IndexType) {
        guard case .string(let text) = value else { return nil }
        string = text
    }

    func indexValue(type: IndexType) -> IndexValue { .string(string) }

    static var placeholder: UTF8Key { UTF8Key("") }

    static func < (lhs: UTF8Key, rhs: UTF8Key) -> Bool { lhs.string.utf8.lexicographicallyPrecedes(rhs.string.utf8) }
    static func == (lhs: UTF8Key, rhs: UTF8Key) -> Bool { lhs.string.utf8.elementsEqual(rhs.string.utf8) }
}
