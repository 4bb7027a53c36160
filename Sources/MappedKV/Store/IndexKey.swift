/// A key of the in-memory index, compared and hashed by its UTF-8 bytes.
///
/// MMKV compares keys byte for byte. Swift's `String` equality is Unicode canonical equivalence,
/// under which two distinct MMKV keys (say, precomposed and decomposed "é") would collide.
struct IndexKey: Hashable {
    let string: String

    init(_ string: String) { self.string = string }

    static func == (lhs: IndexKey, rhs: IndexKey) -> Bool {
        let left = lhs.string.utf8, right = rhs.string.utf8
        guard left.count == right.count else { return false }
        if let equal = left.withContiguousStorageIfAvailable({ a in
            right.withContiguousStorageIfAvailable { b in a.elementsEqual(b) }
        }), let equal {
            return equal
        }
        return left.elementsEqual(right)
    }

    func hash(into hasher: inout Hasher) {
        let utf8 = string.utf8
        if utf8.withContiguousStorageIfAvailable({ hasher.combine(bytes: UnsafeRawBufferPointer($0)) }) == nil {
            for byte in utf8 { hasher.combine(byte) }
        }
        hasher.combine(utf8.count)
    }
}

/// Where the latest live record of a key sits in the store's plaintext mirror of the data region.
struct ValueSlot {
    /// The offset of the record's first byte.
    var recordStart: UInt32
    /// The offset of the value's first byte.
    var valueStart: UInt32
    /// The value length in bytes.
    var valueLength: UInt32

    var recordRange: Range<Int> { Int(recordStart)..<(Int(valueStart) + Int(valueLength)) }
    var valueRange: Range<Int> { Int(valueStart)..<(Int(valueStart) + Int(valueLength)) }
}
