import MappedKVIO

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

// The probe of the open-addressing table: the loop behind every lookup, insert and removal. A
// mapped index file (MappedIndexFile.swift) probes its buckets with a loop of its own, which
// checks each page of buckets before it reads it and stops after visiting every bucket.
extension KeyIndex {
    /// ``probe(for:hash:in:)`` over `buckets` (the table's, a power of two of them, or none),
    /// starting at the home bucket `home`.
    @inline(__always)
    static func probe(
        _ buckets: UnsafeBufferPointer<Entry>, from home: Int, for key: UnsafeRawBufferPointer, hash: UInt32,
        in mirror: UnsafeRawBufferPointer
    ) -> (position: Int, found: Bool) {
        guard !buckets.isEmpty, let keyBase = key.baseAddress, let mirrorBase = mirror.baseAddress else {
            return (-1, false)
        }
        let mask = buckets.count - 1
        var position = home
        // A key that is not UTF-8 carries the repaired flag in its tag, so it never equals `hash`
        // here: ``slot(for:in:)`` and the others look among such keys only after a miss, and
        // only when the table holds any.
        while true {
            let entry = buckets[position]
            if entry.isEmpty { break }
            if entry.tag == hash {
                // The header's first byte is the key length when it is under 128 (nearly always).
                let start = entry.recordStart
                if start < mirror.count, mirror[start] < 0x80 {
                    if Int(mirror[start]) == key.count, start + 1 + key.count <= mirror.count,
                        bytesEqual(mirrorBase + start + 1, keyBase, key.count)
                    {
                        return (position, true)
                    }
                } else if let (length, offset) = varint(at: start, in: mirror), length == key.count,
                    start + offset + length <= mirror.count, memcmp(mirrorBase + start + offset, keyBase, length) == 0
                {
                    return (position, true)
                }
            }
            position = (position + 1) & mask
        }
        return (position, false)
    }
}
