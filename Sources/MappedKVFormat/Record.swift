/// One key/value record of the data region: `varint(keyLength) key varint(valueLength) value`.
///
/// A record whose value is empty is a deletion (docs/FORMAT.md sections 2.3 and 2.7).
package enum Record {
    /// The encoded size of a record with the given key and value lengths. Always inlined: a call
    /// cost more than the arithmetic on the path of every set, remove and batched operation.
    @inlinable @inline(__always)
    package static func encodedSize(keyLength: Int, valueLength: Int) -> Int {
        Varint.size(of: UInt64(keyLength)) + keyLength + Varint.size(of: UInt64(valueLength)) + valueLength
    }

    /// The size of the part before the value: both length varints and the key.
    @inlinable
    package static func headerSize(keyLength: Int, valueLength: Int) -> Int {
        Varint.size(of: UInt64(keyLength)) + keyLength + Varint.size(of: UInt64(valueLength))
    }

    /// Appends the record framing `key` and `value` to `bytes`.
    @inlinable
    package static func append(key: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer, to bytes: inout [UInt8]) {
        Varint.append(UInt64(key.count), to: &bytes)
        bytes.append(contentsOf: key)
        Varint.append(UInt64(value.count), to: &bytes)
        bytes.append(contentsOf: value)
    }

    /// Appends a deletion record for `key` to `bytes`.
    @inlinable
    package static func appendDeletion(key: UnsafeRawBufferPointer, to bytes: inout [UInt8]) {
        Varint.append(UInt64(key.count), to: &bytes)
        bytes.append(contentsOf: key)
        bytes.append(0)
    }
}
