/// A read position in a borrowed byte buffer, with bounds-checked readers for MMKV's primitives.
///
/// Every read either succeeds or throws ``FormatError``; it never reads outside `bytes`.
@usableFromInline
package struct ByteCursor {
    /// The bytes being read.
    @usableFromInline package let bytes: UnsafeRawBufferPointer
    /// The offset of the next byte to read.
    @usableFromInline package var position: Int

    /// Creates a cursor at `position` in `bytes`.
    @inlinable
    package init(_ bytes: UnsafeRawBufferPointer, position: Int = 0) {
        self.bytes = bytes
        self.position = position
    }

    /// Whether every byte has been read.
    @inlinable
    package var isAtEnd: Bool { position >= bytes.count }

    /// The number of bytes left to read.
    @inlinable
    package var remaining: Int { bytes.count - position }

    /// Reads a varint of up to 10 bytes as a 64-bit value.
    @inlinable
    package mutating func readVarint64() throws(FormatError) -> UInt64 {
        let start = position
        var result: UInt64 = 0
        var shift: UInt64 = 0
        while true {
            guard position < bytes.count else { throw .truncated(offset: start) }
            let byte = bytes[position]
            position += 1
            result |= UInt64(byte & 0x7F) << shift
            if byte & 0x80 == 0 { return result }
            shift += 7
            guard shift < 70 else { throw .malformedVarint(offset: start) }
        }
    }

    /// Reads a varint and keeps its low 32 bits, as MMKV's `readRawVarint32` does.
    @inlinable
    package mutating func readVarint32() throws(FormatError) -> UInt32 {
        UInt32(truncatingIfNeeded: try readVarint64())
    }

    /// Reads a length varint that MMKV parses as an `Int32`: it must be non-negative and fit in what is left.
    ///
    /// MMKV keeps only the low 32 bits of a longer varint; MMKV never writes one, so a value above
    /// `Int32.max` is rejected here as damage rather than truncated into a plausible length.
    @inlinable
    package mutating func readLength() throws(FormatError) -> Int {
        let start = position
        let raw = try readVarint64()
        let asInt32 = Int32(truncatingIfNeeded: raw)
        guard raw <= UInt64(Int32.max), asInt32 >= 0, Int(asInt32) <= remaining else {
            throw .invalidLength(offset: start, length: raw)
        }
        return Int(asInt32)
    }

    /// Reads `count` raw bytes.
    @inlinable
    package mutating func readBytes(_ count: Int) throws(FormatError) -> UnsafeRawBufferPointer {
        guard count >= 0, count <= remaining else { throw .truncated(offset: position) }
        let slice = UnsafeRawBufferPointer(rebasing: bytes[position..<(position + count)])
        position += count
        return slice
    }

    /// Reads a little-endian fixed-width integer.
    @inlinable
    package mutating func readLittleEndian<T: FixedWidthInteger>(_: T.Type) throws(FormatError) -> T {
        let size = MemoryLayout<T>.size
        guard size <= remaining else { throw .truncated(offset: position) }
        let value = bytes.loadUnaligned(fromByteOffset: position, as: T.self)
        position += size
        return T(littleEndian: value)
    }
}
