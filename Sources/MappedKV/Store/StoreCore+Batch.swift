import MappedKVFormat

// Several keys in one write, for MMKV's `removeValuesForKeys` and `importFrom` and for
// `exportedEntries`/`importEntries`: both writes are batches (StoreCore+WriteBatch.swift), so a
// reader in any process, or a process killed halfway, sees none of them or all (FORMAT.md 2.7).
extension StoreCore {
    /// One value of a batch: the key, the payload, and the absolute expiry time to store with it
    /// (nil: now plus the store's default) when key expiry is on.
    struct BatchEntry: Sendable {
        var key: String
        var payload: [UInt8]
        var expiry: UInt32?
    }

    /// Removes every key of `keys` that is present, as one batch (``applyBatch(_:)``); absent
    /// keys are skipped. Returns how many were removed.
    @discardableResult
    func removeValues(forKeys keys: [String]) throws(MappedKVError) -> Int {
        var batch = BatchOperations()
        for key in keys { try batch.recordRemove(forKey: key) }
        return try applyBatch(batch)
    }

    /// Stores every entry of `entries` as one batch (``applyBatch(_:)``), each with its expiry
    /// time when key expiry is on; a key given twice keeps its last value.
    func setPayloads(_ entries: [BatchEntry]) throws(MappedKVError) {
        var batch = BatchOperations()
        for entry in entries { try batch.recordSet(payload: entry.payload, forKey: entry.key, expiresAt: entry.expiry) }
        try applyBatch(batch)
    }

    /// Every live entry with its payload (without the expiry suffix) and, when key expiry is on,
    /// its absolute expiry time (0: never).
    func exportEntries() throws(MappedKVError) -> [BatchEntry] {
        try prepareRead()
        let now = loaded.expiryEnabled ? configuration.clock.now() : 0
        var result: [BatchEntry] = []
        result.reserveCapacity(loaded.index.count)
        loaded.mirror.withUnsafeBytes { bytes in
            loaded.index.forEachSlot(in: bytes) { slot in
                guard let range = liveValueRange(slot, now: now) else { return }
                var expiry: UInt32? = nil
                if loaded.expiryEnabled {
                    expiry = ExpirySuffix.time(of: UnsafeRawBufferPointer(rebasing: bytes[slot.valueRange])) ?? 0
                }
                result.append(
                    BatchEntry(
                        key: String(decoding: bytes[slot.keyRange], as: UTF8.self), payload: Array(bytes[range]),
                        expiry: expiry))
            }
        }
        return result
    }
}

extension StoreCore {
    /// Whether `key`'s live value is exactly `payload` (for ``Configuration/comparesBeforeSet``).
    func storedValueEquals(_ payload: UnsafeRawBufferPointer, forKey key: String) -> Bool {
        Self.withBytes(of: key) { storedValueEquals(payload, forKey: $0) }
    }

    /// ``storedValueEquals(_:forKey:)`` for the key whose UTF-8 bytes are `key`.
    func storedValueEquals(_ payload: UnsafeRawBufferPointer, forKey key: UnsafeRawBufferPointer) -> Bool {
        loaded.mirror.withUnsafeBytes { bytes in
            guard let range = liveValueRange(forKey: key, hash: loaded.index.hash(key), in: bytes),
                range.count == payload.count
            else { return false }
            return bytes[range].elementsEqual(payload)
        }
    }
}
