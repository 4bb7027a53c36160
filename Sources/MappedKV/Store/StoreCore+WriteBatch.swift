import MappedKVFormat

// Committing a write batch (``BatchOperations``): under one exclusive lock, every check runs
// first, then room is made for the whole batch at once (growth or a write-back of the state
// before the batch), then the records are appended together and the meta's CRC and size stored
// once (docs/FORMAT.md 2.7a). The invariant: nothing that can fail runs after the first record
// of the batch is written, so other processes, and a load after the writer was killed, see the
// whole batch or none of it.
extension StoreCore {
    /// The buffers of the last batch, emptied, for a new batch to record into; an empty batch if
    /// another batch has them (batches nest).
    func takeSpareBatch() -> BatchOperations {
        var taken = BatchOperations()
        swap(&taken, &spareBatch)
        return taken
    }

    /// Empties `batch` and keeps its buffers for the next batch.
    func keepSpareBatch(_ batch: inout BatchOperations) {
        batch.removeAll()
        swap(&spareBatch, &batch)
    }

    /// Applies `batch`'s sets and removes in order as one append; returns how many records were written.
    @discardableResult
    func applyBatch(_ batch: BatchOperations) throws(MappedKVError) -> Int {
        guard !batch.isEmpty else { return 0 }
        // At most this long whether or not key expiry is on when the lock is taken: in
        // multi-process mode, an append that ends in the page where the region ends skips the
        // catch-up's `fstat` when no other process has written since (as a single set does).
        let longest = batch.setsLengthWithSuffix + batch.removesLength
        return try writing(appendingAtMost: longest) { (files) throws(MappedKVError) -> Int in
            // Another process may have turned expiry on or off while this one waited for the lock.
            let suffixLength = loaded.expiryEnabled ? ExpirySuffix.length : 0
            // The batch's totals say whether a check can fail; only then are the operations
            // walked, in order, so that the first failing one is reported.
            if batch.largestPayload + suffixLength > RecordLimits.maximumValueLength
                || (batch.hasOwnLifetime && !loaded.expiryEnabled)
            {
                for operation in batch.operations where !operation.isRemove {
                    guard operation.payloadLength + suffixLength <= RecordLimits.maximumValueLength else {
                        throw .valueTooLarge(size: operation.payloadLength)
                    }
                    if operation.expiresAfter != nil && !loaded.expiryEnabled {
                        throw .invalidArgument(
                            "an expiry duration for '\(batch.keyString(of: operation))' needs key expiry enabled on the store"
                        )
                    }
                }
            }
            // Only removes of absent keys: nothing to write.
            if batch.setCount == 0 {
                guard containsAnyKey(of: batch) else { return 0 }
            }
            let length = (suffixLength > 0 ? batch.setsLengthWithSuffix : batch.setsLength) + batch.removesLength
            guard length <= RecordLimits.maximumRegionLength else { throw .regionFull }
            // Room for the whole batch first (an upper bound: removes of absent keys write nothing).
            if loaded.index.isEmpty || needsRandomIV || loaded.meta.version < .flag {
                try writeBack(
                    files, incomingLength: length, incomingCount: batch.operations.count,
                    needSync: !loaded.index.isEmpty)
            } else if length >= spaceLeft(files) {
                try makeRoom(files, incomingLength: length, incomingCount: batch.operations.count)
            }
            // From here on nothing throws.
            let start = loaded.mirror.count
            let records: Int
            if suffixLength == 0 && !batch.hasRemoves {
                // The records as recorded are the records to write: one copy into the mirror.
                loaded.mirror.append(contentsOf: batch.records)
                records = fileRecords(of: batch, at: start)
            } else {
                // The records go into the mirror (sized for the whole batch once, then written in
                // place), each with its suffix; removes of absent keys write nothing.
                // Expiry times count from the current time rounded up, so that none comes early.
                let expiryBase = loaded.expiryEnabled ? configuration.clock.roundedUpNow() : 0
                loaded.mirror.append(contentsOf: repeatElement(0, count: length))
                let end: Int
                (end, records) = withKeyHashes(of: batch) { hashes in
                    loaded.withMutableMirrorAndIndex { region, index in
                        writeRecords(
                            of: batch, hashes: hashes, into: region, index: &index, at: start,
                            suffixLength: suffixLength, expiryBase: expiryBase)
                    }
                }
                loaded.mirror.removeLast(loaded.mirror.count - end)
            }
            guard records > 0 else { return 0 }
            try commitAppend(files, from: start)
            loaded.recordCount += records - 1
            return records
        }
    }

    /// Points the index at each set of `batch`, whose records were copied as they are into the
    /// mirror from offset `start`; returns how many records there are.
    private func fileRecords(of batch: BatchOperations, at start: Int) -> Int {
        let operations = batch.operations
        withKeyHashes(of: batch) { hashes in
            loaded.withMirrorAndIndex { region, index in
                index.fileRecords(count: operations.count, in: region) { position in
                    let operation = operations[position]
                    let keyStart = start + operation.keyStart
                    let slot = ValueSlot(
                        keyStart: UInt32(truncatingIfNeeded: keyStart),
                        valueStart: UInt32(truncatingIfNeeded: start + operation.payloadStart),
                        valueLength: UInt32(truncatingIfNeeded: operation.payloadLength),
                        keyLength: UInt16(truncatingIfNeeded: operation.keyLength),
                        keyOffset: UInt8(truncatingIfNeeded: operation.keyStart - operation.recordStart))
                    let key = UnsafeRawBufferPointer(rebasing: region[keyStart..<keyStart + operation.keyLength])
                    return (slot, key, hashes[position])
                }
            }
        }
        return operations.count
    }

    /// Writes the records of `batch` into `region` (the mirror) from offset `start`, in order,
    /// pointing `index` at each set and dropping each removed key; returns where the records end
    /// and how many there are. `region` has room for every record; `hashes` are the operations'
    /// key hashes. A set's expiry time is its own absolute one, or `expiryBase` (the current time
    /// rounded up) plus its duration.
    private func writeRecords(
        of batch: BatchOperations, hashes: UnsafeBufferPointer<UInt32>, into region: UnsafeMutableRawBufferPointer,
        index: inout KeyIndex, at start: Int, suffixLength: Int, expiryBase: UInt32
    ) -> (end: Int, records: Int) {
        let base = region.baseAddress!
        let mirrorBytes = UnsafeRawBufferPointer(region)
        var offset = start
        var records = 0
        let operations = batch.operations
        let recorded = UnsafeRawBufferPointer(batch.records)
        for position in operations.indices {
            let operation = operations[position]
            let hash = hashes[position]
            let key = BatchOperations.key(of: operation, in: recorded)
            if operation.isRemove {
                guard index.remove(key, hash: hash, in: mirrorBytes) != nil else { continue }
                // The deletion record as recorded.
                let length = operation.recordLength
                (base + offset).copyMemory(
                    from: recorded.baseAddress! + operation.recordStart, byteCount: length)
                offset += length
                records += 1
                continue
            }
            let recordStart = offset
            let valueLength = operation.payloadLength + suffixLength
            offset += Varint.write(UInt64(key.count), to: base + offset)
            let keyStart = offset
            (base + offset).copyMemory(from: key.baseAddress!, byteCount: key.count)
            offset += key.count
            offset += Varint.write(UInt64(valueLength), to: base + offset)
            let valueStart = offset
            (base + offset).copyMemory(
                from: recorded.baseAddress! + operation.payloadStart, byteCount: operation.payloadLength)
            offset += operation.payloadLength
            if suffixLength > 0 {
                let expiry =
                    operation.expiresAt
                    ?? ExpirySuffix.expiration(
                        now: expiryBase, duration: operation.expiresAfter ?? defaultExpiryDuration)
                base.storeBytes(of: expiry.littleEndian, toByteOffset: offset, as: UInt32.self)
                offset += ExpirySuffix.length
            }
            let slot = ValueSlot(
                keyStart: UInt32(keyStart), valueStart: UInt32(valueStart), valueLength: UInt32(valueLength),
                keyLength: UInt16(key.count), keyOffset: UInt8(keyStart - recordStart))
            _ = index.update(slot, key: key, hash: hash, in: mirrorBytes)
            records += 1
        }
        return (offset, records)
    }

    /// Calls `body` with the hash of each operation's key of `batch`, in order, once every key's
    /// home bucket has been read: the reads do not depend on each other, so the processor has them
    /// in flight together, and the lookups in `body` find their buckets cached instead of waiting
    /// for one cache miss each in turn.
    private func withKeyHashes<R>(of batch: BatchOperations, _ body: (UnsafeBufferPointer<UInt32>) -> R) -> R {
        let operations = batch.operations
        let recorded = UnsafeRawBufferPointer(batch.records)
        return withUnsafeTemporaryAllocation(of: UInt32.self, capacity: operations.count) { hashes in
            for position in operations.indices {
                hashes[position] = loaded.index.hash(BatchOperations.key(of: operations[position], in: recorded))
            }
            loaded.index.touchHomes(of: UnsafeBufferPointer(hashes))
            return body(UnsafeBufferPointer(hashes))
        }
    }

    /// Whether the index holds the key of any operation of `batch` (expired or not): a remove of
    /// such a key writes a deletion record.
    private func containsAnyKey(of batch: BatchOperations) -> Bool {
        let recorded = UnsafeRawBufferPointer(batch.records)
        return loaded.mirror.withUnsafeBytes { bytes in
            batch.operations.contains {
                loaded.index.slot(for: BatchOperations.key(of: $0, in: recorded), in: bytes) != nil
            }
        }
    }
}
