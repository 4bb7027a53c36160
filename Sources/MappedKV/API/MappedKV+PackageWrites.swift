import MappedKVFormat

// Writes for the package's own modules built on the store: a set of a bytes value whose key is
// given as bytes, which shows the caller the value it replaces and lets it act once the new record
// is in, all in one store call. The invariant: everything runs under the store's locks (the
// inter-process one too, in multi-process mode), so the value `examine` sees is exactly the one
// the new record replaces, and what `recorded` does happens before any other thread or process
// can change the key again: bookkeeping kept beside the store (a cache's running totals) moves
// with the records, in their order.

extension MappedKV {
    /// Stores a bytes value of `length` bytes under the key whose UTF-8 bytes are `key`, in one
    /// call under the store's locks:
    ///
    /// 1. `write` puts the new value's `length` bytes in place, straight into the record;
    /// 2. once the record is committed, `examine` sees the bytes value it replaced where it lies
    ///    (the old record stays in the log), or nil if the key was absent or its value was not a
    ///    bytes value;
    /// 3. `recorded` runs, before the locks are released.
    ///
    /// The closures must not call the store (its lock is held) and must not keep the buffers.
    /// `key` must be the UTF-8 bytes of a `String` (the store does not check them).
    ///
    /// - Throws: what ``set(_:forKey:)`` throws for a bytes value.
    package func replaceBytes(
        forKeyBytes key: UnsafeRawBufferPointer, length: Int,
        examining examine: (_ current: UnsafeRawBufferPointer?) -> Void,
        writing write: (UnsafeMutableRawBufferPointer) -> Void,
        recorded: () -> Void
    ) throws(MappedKVError) {
        let payloadLength = Varint.size(of: UInt64(length)) + length
        try withCore { (core) throws(MappedKVError) in
            try core.appendRecord(
                forKeyBytes: key, payloadLength: payloadLength, expiresAfter: nil, comparing: nil,
                examinesCurrent: true,
                examining: { payload in examine(payload.flatMap(Self.bytesValue(in:))) },
                { start in
                    let value = start + Varint.write(UInt64(length), to: start)
                    write(UnsafeMutableRawBufferPointer(start: value, count: length))
                },
                recorded: recorded)
        }
    }

    /// The bytes of a bytes value's payload (a length varint and exactly that many bytes); nil
    /// for any other payload.
    private static func bytesValue(in payload: UnsafeRawBufferPointer) -> UnsafeRawBufferPointer? {
        var cursor = ByteCursor(payload)
        guard let length = try? cursor.readLength(), length == cursor.remaining else { return nil }
        return try? cursor.readBytes(length)
    }
}
