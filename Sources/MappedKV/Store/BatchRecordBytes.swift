import MappedKVFormat

// The byte buffer a write batch encodes its records into (BatchOperations.swift). A batch
// records a set as a handful of small writes (a length byte, the key, the payload's length and
// the payload); through an `Array` each is a call with a uniqueness and capacity check of its
// own. Here room for a whole record is made once, and the writes that follow are plain stores.
// The invariant: `count <= capacity`, the first `count` bytes are initialized, and the storage is
// owned by this object alone (``BatchOperations`` copies it before it mutates a shared one).

/// A growable buffer of bytes written through a pointer, for ``BatchOperations``.
final class BatchRecordBytes {
    /// The storage: `capacity` bytes (bound to `UInt8`), of which the first `count` are written.
    private(set) var storage: UnsafeMutablePointer<UInt8>
    /// The storage as raw memory.
    private var base: UnsafeMutableRawPointer { UnsafeMutableRawPointer(storage) }
    /// The bytes written.
    private(set) var count = 0
    /// The bytes of storage.
    private(set) var capacity: Int

    /// An empty buffer with room for `capacity` bytes.
    init(capacity: Int = 256) {
        self.capacity = max(capacity, 16)
        storage = .allocate(capacity: self.capacity)
    }

    deinit { storage.deallocate() }

    /// A buffer holding the same bytes, in storage of its own.
    func copy() -> BatchRecordBytes {
        let copy = BatchRecordBytes(capacity: capacity)
        copy.storage.update(from: storage, count: count)
        copy.count = count
        return copy
    }

    /// The written bytes.
    var bytes: UnsafeBufferPointer<UInt8> { UnsafeBufferPointer(start: storage, count: count) }

    /// Makes room for `extra` more bytes, doubling the storage as needed.
    @inline(__always)
    func reserve(_ extra: Int) {
        if capacity - count < extra { grow(toAtLeast: count + extra) }
    }

    private func grow(toAtLeast needed: Int) {
        var newCapacity = capacity * 2
        while newCapacity < needed { newCapacity *= 2 }
        let newStorage = UnsafeMutablePointer<UInt8>.allocate(capacity: newCapacity)
        newStorage.update(from: storage, count: count)
        storage.deallocate()
        storage = newStorage
        capacity = newCapacity
    }

    /// Appends one byte; room for it must have been reserved.
    @inline(__always)
    func appendReserved(_ byte: UInt8) {
        base.storeBytes(of: byte, toByteOffset: count, as: UInt8.self)
        count += 1
    }

    /// Appends the minimal varint of `value`; room for it must have been reserved.
    @inline(__always)
    func appendReserved(varint value: Int) {
        if value < 0x80 {
            appendReserved(UInt8(truncatingIfNeeded: value))
        } else {
            count += Varint.write(UInt64(value), to: base + count)
        }
    }

    /// Appends `source`'s bytes; room for them must have been reserved.
    @inline(__always)
    func appendReserved(_ source: UnsafeRawBufferPointer) {
        Self.copy(source, to: base + count)
        count += source.count
    }

    /// Copies `source` to `destination`: up to 16 bytes as words in line, longer runs by `memcpy`.
    @inline(__always)
    static func copy(_ source: UnsafeRawBufferPointer, to destination: UnsafeMutableRawPointer) {
        let length = source.count
        guard let from = source.baseAddress else { return }
        if length >= 8 && length <= 16 {
            // Two overlapping words cover 8 to 16 bytes.
            destination.storeBytes(of: from.loadUnaligned(as: UInt64.self), as: UInt64.self)
            (destination + length - 8).storeBytes(
                of: from.loadUnaligned(fromByteOffset: length - 8, as: UInt64.self), as: UInt64.self)
        } else {
            destination.copyMemory(from: from, byteCount: length)
        }
    }

    /// Appends `count` bytes that `write` writes at the pointer it is given; room for them must have
    /// been reserved.
    @inline(__always)
    func appendReserved(count length: Int, writingWith write: (UnsafeMutableRawPointer) -> Void) {
        write(base + count)
        count += length
    }

    /// Forgets every byte, keeping the storage unless it is larger than `keptCapacity`.
    func removeAll(keepingAtMost keptCapacity: Int) {
        count = 0
        guard capacity > keptCapacity else { return }
        storage.deallocate()
        capacity = 256
        storage = .allocate(capacity: capacity)
    }
}
