import MappedKVIO

/// Allocates the plaintext mirror of a data region.
///
/// The mirror gets the capacity of the whole region, so appends never reallocate it until the
/// file grows; a mirror of several megabytes asks for transparent huge pages, as the index does,
/// since gets read it at random offsets.
enum MirrorBuffer {
    /// A mirror with room for `capacity` bytes, its first bytes written by `fill`, which returns how many.
    static func make(capacity: Int, fill: (UnsafeMutableRawPointer) -> Int) -> [UInt8] {
        [UInt8](unsafeUninitializedCapacity: max(capacity, 1)) { buffer, count in
            let bytes = UnsafeMutableRawBufferPointer(buffer)
            if bytes.count >= 2 * MemoryAdvice.hugePageSize { MemoryAdvice.preferHugePages(bytes) }
            count = fill(bytes.baseAddress!)
            precondition(count <= bytes.count, "mirror overfilled")
        }
    }

    /// A mirror holding a copy of `bytes`, with room for `capacity` bytes in all.
    static func make(copying bytes: UnsafeRawBufferPointer, capacity: Int) -> [UInt8] {
        make(capacity: max(capacity, bytes.count)) { base in
            if let source = bytes.baseAddress, !bytes.isEmpty { base.copyMemory(from: source, byteCount: bytes.count) }
            return bytes.count
        }
    }
}
