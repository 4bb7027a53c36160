import MappedKVFormat

// Reads for the package's own modules built on the store: several keys in one store call, so a
// page of entries costs one lock and one state check instead of one each. The invariant: the
// payloads a call hands over are those of one state of the store, as a single
// `payload(forKey:)` call's is.
extension MappedKV {
    /// The stored payload bytes of each key of `keys`, in order (nil for an absent key), read in
    /// one call under the store's lock: every payload is from the same state of the store.
    package func payloads(forKeys keys: PackedKeys) throws(MappedKVError) -> [[UInt8]?] {
        var payloads: [[UInt8]?] = []
        payloads.reserveCapacity(keys.count)
        try withPayloads(forKeys: keys) { _, payload in payloads.append(payload.map { Array($0) }) }
        return payloads
    }

    /// Calls `body` with the position of each key of `keys` and its stored payload bytes where
    /// they lie (nil for an absent key), in order, in one call under the store's lock: every
    /// payload is from the same state of the store, and none is copied. The buffer is valid only
    /// during its call, and `body` must not call the store (its lock is held).
    ///
    /// Each key is hashed once, for both the read-ahead of every key's bucket and record and the
    /// lookup after it.
    package func withPayloads(
        forKeys keys: PackedKeys, _ body: (_ position: Int, _ payload: UnsafeRawBufferPointer?) -> Void
    ) throws(MappedKVError) {
        // The loop is `StoreCore.withPayloads(forKeys:_:)`'s, over packed keys instead of strings. One
        // generic loop over both kinds of keys (a protocol giving each key's bytes by position) was
        // tried and not kept: it slowed a collections page's reads (`tools/bench.sh --collections`)
        // and did not speed up `values(forKeys:as:)`.
        try withCore { (core) throws(MappedKVError) in
            if core.mappedReads.isActive {
                let read = keys.bytes.withUnsafeBytes { all in
                    Result { () throws(MappedKVError) in
                        try core.payloadsMapped(count: keys.count) { position, lookup in
                            lookup(UnsafeRawBufferPointer(rebasing: all[keys.range(of: position)]))
                        }
                    }
                }
                if let copied = try read.get() { return copied.handOver(body) }
            }
            try core.prepareRead()
            core.loaded.mirror.withUnsafeBytes { mirror in
                keys.bytes.withUnsafeBytes { all in
                    func key(_ position: Int) -> UnsafeRawBufferPointer {
                        UnsafeRawBufferPointer(rebasing: all[keys.range(of: position)])
                    }
                    withUnsafeTemporaryAllocation(of: UInt32.self, capacity: keys.count) { hashes in
                        for position in 0..<keys.count { hashes[position] = core.loaded.index.hash(key(position)) }
                        if keys.count > 1 {
                            core.loaded.index.touchRecords(ofHashes: UnsafeBufferPointer(hashes), in: mirror)
                        }
                        for position in 0..<keys.count {
                            let range = core.liveValueRange(forKey: key(position), hash: hashes[position], in: mirror)
                            body(position, range.map { UnsafeRawBufferPointer(rebasing: mirror[$0]) })
                        }
                    }
                }
            }
        }
    }

    /// Calls `body` with the bytes value of the key whose UTF-8 bytes are `key`, where it lies in
    /// the store's memory, or with nil if the key is absent: ``withBytes(forKey:_:)`` for a caller
    /// that builds its keys as bytes (a prefix and a name, say) and need not make a `String` of
    /// each. One store call and one borrow of the store's memory; the buffer is valid only during
    /// the call, and `body` must not call the store (its lock is held).
    ///
    /// - Throws: ``MappedKVError/valueDecodingFailed(key:type:reason:)`` if the value is not a
    ///   bytes value.
    package func withBytes(
        forKeyBytes key: UnsafeRawBufferPointer, _ body: (UnsafeRawBufferPointer?) -> Void
    ) throws(MappedKVError) {
        try withCore { (core) throws(MappedKVError) in
            if core.mappedReads.isActive {
                // Copied before `body` sees them: a torn read is read again first (FORMAT.md 12.5).
                let read = try core.readMapped(forKeyBytes: key, StoreCore.copiedBytesValue)
                switch read {
                case nil: break
                case .success(let bytes)?:
                    guard let bytes else { return body(nil) }
                    return bytes.withUnsafeBytes { body($0) }
                case .failure(let error)?:
                    throw .valueDecodingFailed(
                        key: String(decoding: key, as: UTF8.self), type: "[UInt8]", reason: error.description)
                }
            }
            try core.prepareRead()
            let failure = core.loaded.mirror.withUnsafeBytes { mirror -> FormatError? in
                guard let range = core.liveValueRange(forKey: key, hash: core.loaded.index.hash(key), in: mirror) else {
                    body(nil)
                    return nil
                }
                var cursor = ByteCursor(UnsafeRawBufferPointer(rebasing: mirror[range]))
                do throws(FormatError) {
                    let length = try cursor.readLength()
                    body(try cursor.readBytes(length))
                    return nil
                } catch {
                    return error
                }
            }
            if let failure {
                throw .valueDecodingFailed(
                    key: String(decoding: key, as: UTF8.self), type: "[UInt8]", reason: failure.description)
            }
        }
    }
}
