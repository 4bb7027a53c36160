/// The protobuf base-128 varint: 7 bits a byte, least significant group first.
///
/// Writers emit only the minimal encoding, as MMKV does (docs/FORMAT.md section 0).
@usableFromInline
package enum Varint {
    /// The longest encoding of a 64-bit value, in bytes.
    @usableFromInline package static let maxLength = 10

    /// The number of bytes of the minimal encoding of `value`. Always inlined: a few instructions,
    /// on the path of every set.
    @inlinable @inline(__always)
    package static func size(of value: UInt64) -> Int {
        // One byte per started group of 7 bits; zero takes one byte. Lengths under 128, nearly
        // every key and value length, take the first test.
        if value < 0x80 { return 1 }
        let bits = 64 - (value | 1).leadingZeroBitCount
        return (bits + 6) / 7
    }

    /// Appends the minimal encoding of `value` to `bytes`. Values under 128 (most lengths) are
    /// appended in line; longer encodings by ``appendMultibyte(_:to:)``.
    @inlinable @inline(__always)
    package static func append(_ value: UInt64, to bytes: inout [UInt8]) {
        if value < 0x80 {
            bytes.append(UInt8(truncatingIfNeeded: value))
        } else {
            appendMultibyte(value, to: &bytes)
        }
    }

    /// Appends the minimal encoding of `value` to `bytes`, whatever its length.
    @inlinable
    package static func appendMultibyte(_ value: UInt64, to bytes: inout [UInt8]) {
        var value = value
        while value >= 0x80 {
            bytes.append(UInt8(truncatingIfNeeded: value) | 0x80)
            value >>= 7
        }
        bytes.append(UInt8(value))
    }

    /// Writes the minimal encoding of `value` at `pointer` and returns the number of bytes written.
    ///
    /// The caller guarantees room for `size(of: value)` bytes.
    @inlinable
    package static func write(_ value: UInt64, to pointer: UnsafeMutableRawPointer) -> Int {
        var value = value
        var count = 0
        while value >= 0x80 {
            pointer.storeBytes(of: UInt8(truncatingIfNeeded: value) | 0x80, toByteOffset: count, as: UInt8.self)
            value >>= 7
            count += 1
        }
        pointer.storeBytes(of: UInt8(value), toByteOffset: count, as: UInt8.self)
        return count + 1
    }

    /// The minimal encoding of `value` as a new array.
    package static func encode(_ value: UInt64) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(size(of: value))
        append(value, to: &bytes)
        return bytes
    }
}
