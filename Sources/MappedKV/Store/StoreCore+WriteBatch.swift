import MappedKVFormat

// Committing a write batch (``BatchOperations``): under one exclusive lock, every check runs
// first, then room is made for the whole batch at once (growth or a write-back of the state
// before the batch), then the records are appended together and the meta's CRC and size stored
// once (docs/FORMAT.md 2.7a). The invariant: nothing that can fail runs after the first record
// of the batch is written, so other processes, and a load after the writer was killed, see the
// whole batch or none of it.
extension StoreCore {
    /// Applies `batch`'s sets and removes in order as one append; returns how many records were written.
    @discardableResult
    func applyBatch(_ batch: BatchOperations) throws(MappedKVError) -> Int {
        guard !batch.isEmpty else { return 0 }
        return try writing { (files) throws(MappedKVError) -> Int in
            // Another process may have turned expiry on or off while this one waited for the lock.
            let suffixLength = expiryEnabled ? ExpirySuffix.length : 0
            var length = 0
            var hasSet = false
            var removesPresentKey = false
            for operation in batch.operations {
                let keyLength = operation.key.utf8.count
                if operation.isRemove {
                    length += Record.encodedSize(keyLength: keyLength, valueLength: 0)
                    if !removesPresentKey && !hasSet { removesPresentKey = contains(storedKey: operation.key) }
                    continue
                }
                hasSet = true
                guard operation.payloadLength + suffixLength <= RecordLimits.maximumValueLength else {
                    throw .valueTooLarge(size: operation.payloadLength)
                }
                if operation.expiresAfter != nil && !expiryEnabled {
                    throw .invalidArgument(
                        "an expiry duration for '\(operation.key)' needs key expiry enabled on the store")
                }
                length += Record.encodedSize(keyLength: keyLength, valueLength: operation.payloadLength + suffixLength)
            }
            // Only removes of absent keys: nothing to write.
            guard hasSet || removesPresentKey else { return 0 }
            guard length <= RecordLimits.maximumRegionLength else { throw .regionFull }
            // Room for the whole batch first (an upper bound: removes of absent keys write nothing).
            if index.isEmpty || needsRandomIV || meta.version < .flag {
                try writeBack(files, incomingLength: length, needSync: !index.isEmpty)
            } else if length >= spaceLeft(files) {
                try makeRoom(files, incomingLength: length)
            }
            // From here on nothing throws: the records go into the mirror, then out in one append.
            let now = expiryEnabled ? configuration.clock.now() : 0
            let start = mirror.count
            var records = 0
            for operation in batch.operations {
                if operation.isRemove {
                    let removed = mirror.withUnsafeBytes { bytes in
                        Self.withBytes(of: operation.key) { index.remove($0, in: bytes) }
                    }
                    guard removed != nil else { continue }
                    Self.withBytes(of: operation.key) { Record.appendDeletion(key: $0, to: &mirror) }
                    records += 1
                    continue
                }
                appendRecord(of: operation, payloads: batch.payloads, suffixLength: suffixLength, now: now)
                records += 1
            }
            guard records > 0 else { return 0 }
            commitAppend(files, from: start)
            recordCount += records - 1
            return records
        }
    }

    /// Appends the record of one set to the mirror and points the index at it.
    private func appendRecord(
        of operation: BatchOperations.Operation, payloads: [UInt8], suffixLength: Int, now: UInt32
    ) {
        let recordStart = mirror.count
        let keyLength = operation.key.utf8.count
        let valueLength = operation.payloadLength + suffixLength
        Varint.append(UInt64(keyLength), to: &mirror)
        let keyStart = mirror.count
        Self.withBytes(of: operation.key) { mirror.append(contentsOf: $0) }
        Varint.append(UInt64(valueLength), to: &mirror)
        let valueStart = mirror.count
        payloads.withUnsafeBytes { bytes in
            mirror.append(
                contentsOf: UnsafeRawBufferPointer(
                    rebasing: bytes[operation.payloadStart..<(operation.payloadStart + operation.payloadLength)]))
        }
        if suffixLength > 0 {
            let expiry = ExpirySuffix.expiration(now: now, duration: operation.expiresAfter ?? defaultExpiryDuration)
            ExpirySuffix.append(expiry, to: &mirror)
        }
        let slot = ValueSlot(
            keyStart: UInt32(keyStart), valueStart: UInt32(valueStart), valueLength: UInt32(valueLength),
            keyLength: UInt16(keyLength), keyOffset: UInt8(keyStart - recordStart))
        mirror.withUnsafeBytes { bytes in _ = index.update(slot, in: bytes) }
    }

    /// Whether the index holds `key` (expired or not): a remove of it writes a deletion record.
    private func contains(storedKey key: String) -> Bool {
        mirror.withUnsafeBytes { bytes in Self.withBytes(of: key) { index.slot(for: $0, in: bytes) != nil } }
    }
}
