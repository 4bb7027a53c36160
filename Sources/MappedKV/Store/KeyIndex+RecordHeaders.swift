#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

// Reading a record's header where it lies in the mirror (docs/FORMAT.md 2.3: the key's length as a
// varint, the key, the value's length as a varint, the value), and comparing a key's bytes with a
// record's. The index keeps only where each record starts; every lookup reads the lengths back
// from here. The invariant: every read stays inside the mirror, and a header that does not fit is
// reported as nil, never read past.

extension KeyIndex {
    /// The slot of the record that starts at `recordStart` of `mirror`, read from its header, or
    /// nil if the header does not fit in `mirror` (an index out of step with its mirror).
    @inline(__always)
    static func slot(
        ofRecordAt recordStart: Int, repaired: Bool, in mirror: UnsafeRawBufferPointer
    ) -> ValueSlot? {
        // The common header, both lengths under 128 (one byte each), read in line; any other goes
        // through the general decoder, out of line.
        if recordStart >= 0, recordStart < mirror.count {
            let keyLength = Int(mirror[recordStart])
            let valueHeader = recordStart + 1 + keyLength
            if keyLength > 0, keyLength < 0x80, valueHeader < mirror.count {
                let valueLength = Int(mirror[valueHeader])
                if valueLength < 0x80, valueHeader + 1 + valueLength <= mirror.count {
                    var slot = ValueSlot(
                        keyStart: UInt32(truncatingIfNeeded: recordStart + 1),
                        valueStart: UInt32(truncatingIfNeeded: valueHeader + 1),
                        valueLength: UInt32(truncatingIfNeeded: valueLength),
                        keyLength: UInt16(truncatingIfNeeded: keyLength), keyOffset: 1)
                    slot.keyIsRepaired = repaired
                    return slot
                }
            }
        }
        return decodedSlot(ofRecordAt: recordStart, repaired: repaired, in: mirror)
    }

    /// ``slot(ofRecordAt:repaired:in:)`` through the general varint decoder.
    @inline(never)
    private static func decodedSlot(
        ofRecordAt recordStart: Int, repaired: Bool, in mirror: UnsafeRawBufferPointer
    ) -> ValueSlot? {
        guard let (keyLength, keyOffset) = varint(at: recordStart, in: mirror) else { return nil }
        let keyStart = recordStart + keyOffset
        guard let (valueLength, valueOffset) = varint(at: keyStart + keyLength, in: mirror) else { return nil }
        let valueStart = keyStart + keyLength + valueOffset
        guard keyLength > 0, keyLength <= Int(UInt16.max), valueStart + valueLength <= mirror.count else { return nil }
        var slot = ValueSlot(
            keyStart: UInt32(truncatingIfNeeded: keyStart), valueStart: UInt32(truncatingIfNeeded: valueStart),
            valueLength: UInt32(truncatingIfNeeded: valueLength), keyLength: UInt16(truncatingIfNeeded: keyLength),
            keyOffset: UInt8(truncatingIfNeeded: keyOffset))
        slot.keyIsRepaired = repaired
        return slot
    }

    /// The slot a bucket points to.
    @inline(__always)
    static func slot(of entry: Entry, in mirror: UnsafeRawBufferPointer) -> ValueSlot? {
        slot(ofRecordAt: entry.recordStart, repaired: entry.isRepaired, in: mirror)
    }

    /// A record header's varint at `offset` (as ``RecordDecoder`` reads it: up to ten bytes, a
    /// length that fits an `Int32`) and its length in bytes, or nil if it runs past `mirror`.
    @inline(__always)
    static func varint(at offset: Int, in mirror: UnsafeRawBufferPointer) -> (value: Int, length: Int)? {
        guard offset >= 0, offset < mirror.count else { return nil }
        let first = mirror[offset]
        if first < 0x80 { return (Int(first), 1) }
        var value: UInt64 = 0
        var shift: UInt64 = 0
        var position = offset
        while position < mirror.count, shift < 70 {
            let byte = mirror[position]
            value |= UInt64(byte & 0x7F) << shift
            position += 1
            if byte < 0x80 { return (Int(Int32(truncatingIfNeeded: value)), position - offset) }
            shift += 7
        }
        return nil
    }

    /// Whether the `count` bytes at `a` and at `b` are equal. Keys of 8 to 16 bytes (most keys) are
    /// compared as two overlapping 8-byte words, without a call; others through `memcmp`.
    @inline(__always)
    static func bytesEqual(_ a: UnsafeRawPointer, _ b: UnsafeRawPointer, _ count: Int) -> Bool {
        guard count >= 8, count <= 16 else { return memcmp(a, b, count) == 0 }
        let tail = count - 8
        return a.loadUnaligned(as: UInt64.self) == b.loadUnaligned(as: UInt64.self)
            && a.loadUnaligned(fromByteOffset: tail, as: UInt64.self)
                == b.loadUnaligned(fromByteOffset: tail, as: UInt64.self)
    }
}
