import MappedKVFormat

// Batches: several records written as one append (docs/FORMAT.md 2.7). The records go into the
// region together and the meta's CRC and size are stored once after all of them, so a reader in
// any process, or a process killed halfway, sees either none of the batch or all of it.
extension StoreCore {
    /// One value of a batch: the key, the payload, and the absolute expiry time to store with it
    /// (nil: now plus the store's default) when key expiry is on.
    struct BatchEntry: Sendable {
        var key: String
        var payload: [UInt8]
        var expiry: UInt32?
    }

    /// Removes every key of `keys` that is present with one append of deletion records (or one
    /// write-back if they do not fit); absent keys are skipped. Returns how many were removed.
    @discardableResult
    func removeValues(forKeys keys: [String]) throws(MappedKVError) -> Int {
        for key in keys { try Self.validate(key: key) }
        return try writing { (files) throws(MappedKVError) -> Int in
            var removed: [String] = []
            var seen = Set<String>()
            for key in keys where seen.insert(key).inserted {
                let slot = mirror.withUnsafeBytes { bytes in Self.withBytes(of: key) { index.remove($0, in: bytes) } }
                if slot != nil { removed.append(key) }
            }
            guard !removed.isEmpty else { return 0 }
            let length = removed.reduce(0) { $0 + Record.encodedSize(keyLength: $1.utf8.count, valueLength: 0) }
            if length < spaceLeft(files) && !needsRandomIV {
                let start = mirror.count
                for key in removed { Self.withBytes(of: key) { Record.appendDeletion(key: $0, to: &mirror) } }
                commitAppend(files, from: start)
                recordCount += removed.count - 1
            } else if index.isEmpty {
                try clearAll()
            } else {
                // The compaction drops the keys, so no deletion records are needed.
                try writeBack(files, incomingLength: 0, needSync: true)
            }
            return removed.count
        }
    }

    /// Stores every entry of `entries` with one append (after one write-back or growth if they do
    /// not fit); a key given twice keeps its last value.
    func setPayloads(_ entries: [BatchEntry]) throws(MappedKVError) {
        for entry in entries {
            try Self.validate(key: entry.key)
            guard !entry.payload.isEmpty else {
                throw .invalidArgument("an empty payload for '\(entry.key)' would be read as a deletion")
            }
        }
        guard !entries.isEmpty else { return }
        try writing { (files) throws(MappedKVError) in
            let suffixLength = expiryEnabled ? ExpirySuffix.length : 0
            var length = 0
            for entry in entries {
                guard entry.payload.count + suffixLength <= RecordLimits.maximumValueLength else {
                    throw .valueTooLarge(size: entry.payload.count)
                }
                length += Record.encodedSize(
                    keyLength: entry.key.utf8.count, valueLength: entry.payload.count + suffixLength)
            }
            guard length <= RecordLimits.maximumRegionLength else { throw .regionFull }
            if index.isEmpty || needsRandomIV || meta.version < .flag {
                try writeBack(files, incomingLength: length, incomingCount: entries.count, needSync: !index.isEmpty)
            } else if length >= spaceLeft(files) {
                try makeRoom(files, incomingLength: length, incomingCount: entries.count)
            }
            let now = configuration.clock.now()
            let start = mirror.count
            var slots: [ValueSlot] = []
            slots.reserveCapacity(entries.count)
            for entry in entries {
                let recordStart = mirror.count
                let keyLength = entry.key.utf8.count
                Varint.append(UInt64(keyLength), to: &mirror)
                let keyStart = mirror.count
                Self.withBytes(of: entry.key) { mirror.append(contentsOf: $0) }
                Varint.append(UInt64(entry.payload.count + suffixLength), to: &mirror)
                let valueStart = mirror.count
                mirror.append(contentsOf: entry.payload)
                if expiryEnabled {
                    let time =
                        entry.expiry ?? ExpirySuffix.expiration(now: now, duration: defaultExpiryDuration)
                    ExpirySuffix.append(time, to: &mirror)
                }
                slots.append(
                    ValueSlot(
                        keyStart: UInt32(keyStart), valueStart: UInt32(valueStart),
                        valueLength: UInt32(entry.payload.count + suffixLength), keyLength: UInt16(keyLength),
                        keyOffset: UInt8(keyStart - recordStart)))
            }
            commitAppend(files, from: start)
            recordCount += entries.count - 1
            mirror.withUnsafeBytes { bytes in
                for slot in slots { _ = index.update(slot, in: bytes) }
            }
        }
    }

    /// Every live entry with its payload (without the expiry suffix) and, when key expiry is on,
    /// its absolute expiry time (0: never).
    func exportEntries() throws(MappedKVError) -> [BatchEntry] {
        try prepareRead()
        let now = expiryEnabled ? configuration.clock.now() : 0
        var result: [BatchEntry] = []
        result.reserveCapacity(index.count)
        mirror.withUnsafeBytes { bytes in
            index.forEachSlot(in: bytes) { slot in
                guard let range = liveValueRange(slot, now: now) else { return }
                var expiry: UInt32? = nil
                if expiryEnabled {
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
        guard let range = liveValueRange(forKey: key), range.count == payload.count else { return false }
        return mirror.withUnsafeBytes { bytes in bytes[range].elementsEqual(payload) }
    }
}
