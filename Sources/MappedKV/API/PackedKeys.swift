// Store keys as UTF-8 bytes laid end to end, for the package's batched reads
// (``MappedKV/withPayloads(forKeys:_:)``): a page of entries builds its keys into one buffer instead
// of one `String` each, and the store hashes each key once. The invariant: key `n` is
// `bytes[start(n)..<ends[n]]`, where `start(0)` is 0 and `start(n)` is `ends[n - 1]`.

/// A list of store keys, each given as its UTF-8 bytes, stored end to end in one buffer.
package struct PackedKeys {
    /// Every key's bytes, one after another.
    package private(set) var bytes: [UInt8] = []
    /// Where each key ends in ``bytes``.
    package private(set) var ends: [Int] = []

    /// An empty list with room for `count` keys of `bytesPerKey` bytes each.
    package init(reservingCapacity count: Int, bytesPerKey: Int) {
        bytes.reserveCapacity(count * bytesPerKey)
        ends.reserveCapacity(count)
    }

    /// The number of keys.
    package var count: Int { ends.count }

    /// Appends the key whose UTF-8 bytes are `head` followed by `tail`'s.
    package mutating func append(_ head: UnsafeRawBufferPointer, _ tail: String) {
        bytes.append(contentsOf: head)
        bytes.append(contentsOf: tail.utf8)
        ends.append(bytes.count)
    }

    /// The range of key `position` in ``bytes``.
    @inline(__always)
    func range(of position: Int) -> Range<Int> {
        (position == 0 ? 0 : ends[position - 1])..<ends[position]
    }
}
