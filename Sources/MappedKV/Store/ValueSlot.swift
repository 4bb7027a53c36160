import MappedKVFormat

/// Where the latest live record of a key sits in the store's plaintext mirror of the data region.
///
/// The key itself is not copied: its bytes are `mirror[keyRange]`, so loading a store builds no
/// strings and the index compares keys byte for byte, as MMKV does.
///
/// A key that is not UTF-8 (MMKV's C++ API can write one; a Swift `String` cannot hold one) is
/// marked ``keyIsRepaired``: the index files it under its UTF-8 repair (each invalid sequence
/// replaced by U+FFFD), the string that `allKeys` shows, so it can be read, set and removed by that
/// name. Its record keeps the original bytes.
struct ValueSlot: Equatable {
    /// The offset of the key's first byte.
    var keyStart: UInt32
    /// The offset of the value's first byte.
    var valueStart: UInt32
    /// The value length in bytes.
    var valueLength: UInt32
    /// The key length in bytes (at most 65,531 in any record MMKV accepts); never zero.
    var keyLength: UInt16
    /// The length of the key-length varint before the key: `keyStart` minus the record's start.
    var keyOffset: UInt8
    /// Whether the key bytes are not UTF-8, so the index compares their repaired form.
    var keyIsRepaired = false

    /// A slot from its fields.
    init(keyStart: UInt32, valueStart: UInt32, valueLength: UInt32, keyLength: UInt16, keyOffset: UInt8) {
        self.keyStart = keyStart
        self.valueStart = valueStart
        self.valueLength = valueLength
        self.keyLength = keyLength
        self.keyOffset = keyOffset
    }

    /// A slot for the record at `location`, whose key is 1 to 65,531 bytes.
    init(_ location: RecordLocation) {
        keyStart = UInt32(truncatingIfNeeded: location.keyStart)
        valueStart = UInt32(truncatingIfNeeded: location.valueStart)
        valueLength = UInt32(truncatingIfNeeded: location.valueLength)
        keyLength = UInt16(truncatingIfNeeded: location.keyLength)
        keyOffset = UInt8(truncatingIfNeeded: location.keyStart - location.start)
    }

    var recordStart: Int { Int(keyStart) - Int(keyOffset) }
    var keyRange: Range<Int> { Int(keyStart)..<(Int(keyStart) + Int(keyLength)) }
    var recordRange: Range<Int> { recordStart..<(Int(valueStart) + Int(valueLength)) }
    var valueRange: Range<Int> { Int(valueStart)..<(Int(valueStart) + Int(valueLength)) }
}
