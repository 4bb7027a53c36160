// Reads for the package's own modules (MappedKVCollections): several keys in one store call, so a
// page of entries costs one lock and one state check instead of one each. The invariant: the
// payloads a call hands over are those of one state of the store, as a single
// `payload(forKey:)` call's is.
extension MappedKV {
    /// The stored payload bytes of each key of `keys`, in order (nil for an absent key), read in
    /// one call under the store's lock: every payload is from the same state of the store.
    package func payloads(forKeys keys: [String]) throws(MappedKVError) -> [[UInt8]?] {
        try withCore { (core) throws(MappedKVError) -> [[UInt8]?] in
            try core.prepareRead()
            core.touchRecords(forKeys: keys)
            var payloads: [[UInt8]?] = []
            payloads.reserveCapacity(keys.count)
            for key in keys { payloads.append(try core.payload(forKey: key)) }
            return payloads
        }
    }

    /// Calls `body` with the position of each key of `keys` and its stored payload bytes where
    /// they lie (nil for an absent key), in order, in one call under the store's lock: every
    /// payload is from the same state of the store, and none is copied. The buffer is valid only
    /// during its call, and `body` must not call the store (its lock is held).
    package func withPayloads(
        forKeys keys: [String], _ body: (_ position: Int, _ payload: UnsafeRawBufferPointer?) -> Void
    ) throws(MappedKVError) {
        try withCore { (core) throws(MappedKVError) in
            try core.prepareRead()
            core.touchRecords(forKeys: keys)
            core.mirror.withUnsafeBytes { bytes in
                for (position, key) in keys.enumerated() {
                    let range = core.liveValueRange(forKey: key)
                    body(position, range.map { UnsafeRawBufferPointer(rebasing: bytes[$0]) })
                }
            }
        }
    }
}
