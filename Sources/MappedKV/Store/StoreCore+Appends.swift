import MappedKVCrypto
import MappedKVFormat

// Appends: a set or a remove writes one record at the end of the region (encrypted by continuing
// the cipher stream) and then the meta's CRC and size, in that order, so a reader or a process
// killed halfway sees either the old region or the new one (docs/FORMAT.md 2.7). When the record
// does not fit, ``StoreCore/makeRoom(_:incomingLength:)`` grows or compacts the file first.
extension StoreCore {
    /// Encodes `value` and appends it as the new record of `key`, expiring after `duration` seconds
    /// (nil: the store's default; 0: never) when key expiry is on.
    func set<V: PayloadCodable>(
        _ value: V, forKey key: String, expiresAfter duration: UInt32? = nil
    ) throws(MappedKVError) {
        // A payload whose length is known beforehand is written straight into the record, unless
        // the store compares it with the stored value first.
        if let length = value.directPayloadLength, length > 0, !configuration.comparesBeforeSet {
            try appendRecord(forKey: key, payloadLength: length, expiresAfter: duration, comparing: nil) {
                value.writePayload(to: $0)
            }
            return
        }
        // Payloads are encoded one after another into the scratch buffer, which is emptied only
        // once it passes a few KiB (emptying an array costs more than a small set), and dropped
        // when a large value left it with a large capacity.
        var buffer = scratch
        scratch = []
        if buffer.count > Self.scratchLimit {
            if buffer.capacity > 16 * Self.scratchLimit { buffer = [] } else { buffer.removeAll(keepingCapacity: true) }
        }
        let start = buffer.count
        defer { scratch = buffer }
        value.encodePayload(into: &buffer)
        try buffer.withRawBytes { (all) throws(MappedKVError) in
            try setPayload(UnsafeRawBufferPointer(rebasing: all[start...]), forKey: key, expiresAfter: duration)
        }
    }

    /// The bytes of encoded payloads the scratch buffer accumulates before it is emptied.
    private static let scratchLimit = 4_096

    /// Appends a record holding `payload` (plus the expiry suffix when expiry is on) for `key`.
    func setPayload(
        _ payload: UnsafeRawBufferPointer, forKey key: String, expiresAfter duration: UInt32? = nil
    ) throws(MappedKVError) {
        guard let source = payload.baseAddress, !payload.isEmpty else {
            throw .invalidArgument("an empty payload would be read as a deletion; encode empty values as 00")
        }
        try appendRecord(forKey: key, payloadLength: payload.count, expiresAfter: duration, comparing: payload) {
            $0.copyMemory(from: source, byteCount: payload.count)
        }
    }

    /// Appends a record for `key` whose payload of `payloadLength` bytes (at least 1) `write` puts
    /// in place, plus the expiry suffix when expiry is on. `payload`, when given, is the same
    /// bytes, compared with the stored value when ``Configuration/comparesBeforeSet`` is on.
    private func appendRecord(
        forKey key: String, payloadLength: Int, expiresAfter duration: UInt32?,
        comparing payload: UnsafeRawBufferPointer?,
        _ write: (UnsafeMutableRawPointer) -> Void
    ) throws(MappedKVError) {
        let failure = Self.withBytes(of: key) { key -> MappedKVError? in
            do throws(MappedKVError) {
                try appendRecord(
                    forKeyBytes: key, payloadLength: payloadLength, expiresAfter: duration, comparing: payload, write)
                return nil
            } catch {
                return error
            }
        }
        if let failure { throw failure }
    }

    /// ``appendRecord(forKey:payloadLength:expiresAfter:comparing:_:)`` for the key whose UTF-8
    /// bytes are `key`. Under the store's locks, if `examinesCurrent`, `examine` sees the live
    /// payload the new record replaces, where it lies (nil if the key was absent or expired): once
    /// the record is committed, through the slot the index hands back when it takes the new one
    /// (the old record is still in the log), so the key is looked up once, not twice (a lookup of
    /// its own before the append slowed `mappedkv bench` set_int32's replacing sets). `recorded` runs after
    /// it, before the locks are released. Neither may call the store. (Flag and no-op defaults
    /// rather than optional closures, which Swift makes escaping: a set would then allocate their
    /// contexts.)
    func appendRecord(
        forKeyBytes key: UnsafeRawBufferPointer, payloadLength: Int, expiresAfter duration: UInt32?,
        comparing payload: UnsafeRawBufferPointer?, examinesCurrent: Bool = false,
        examining examine: (UnsafeRawBufferPointer?) -> Void = { _ in },
        _ write: (UnsafeMutableRawPointer) -> Void, recorded: () -> Void = {}
    ) throws(MappedKVError) {
        let keyLength = key.count
        try Self.validate(keyLength: keyLength)
        guard payloadLength <= RecordLimits.maximumValueLength else { throw .valueTooLarge(size: payloadLength) }
        // The key's bucket travels from memory while the record is written; the lookup comes last.
        loaded.index.prefetchHome(of: key)
        // At most this long, whether or not key expiry is on when the lock is taken.
        let longest = Record.encodedSize(keyLength: keyLength, valueLength: payloadLength + ExpirySuffix.length)
        try writing(appendingAtMost: longest) { (files) throws(MappedKVError) in
            // Another process may have turned expiry on or off while this one waited for the lock.
            let suffixLength = loaded.expiryEnabled ? ExpirySuffix.length : 0
            guard payloadLength + suffixLength <= RecordLimits.maximumValueLength else {
                throw .valueTooLarge(size: payloadLength)
            }
            if duration != nil && !loaded.expiryEnabled {
                throw .invalidArgument("an expiry duration needs key expiry enabled on the store")
            }
            if configuration.comparesBeforeSet && !loaded.expiryEnabled, let payload,
                storedValueEquals(payload, forKey: key)
            {
                // Nothing is written: the value in place is the one given.
                if examinesCurrent { examine(payload) }
                return
            }
            let valueLength = payloadLength + suffixLength
            let recordLength = Record.encodedSize(keyLength: keyLength, valueLength: valueLength)
            if loaded.index.isEmpty || needsRandomIV || loaded.meta.version < .flag {
                try writeBack(files, incomingLength: recordLength, needSync: !loaded.index.isEmpty)
            } else if recordLength >= spaceLeft(files) {
                try makeRoom(files, incomingLength: recordLength)
            }
            let start = loaded.mirror.count
            Varint.append(UInt64(keyLength), to: &loaded.mirror)
            let keyStart = loaded.mirror.count
            loaded.mirror.append(contentsOf: key)
            Varint.append(UInt64(valueLength), to: &loaded.mirror)
            let valueStart = loaded.mirror.count
            Self.appendWritten(payloadLength, to: &loaded.mirror, write)
            if loaded.expiryEnabled {
                let expiry = configuration.clock.expiration(after: duration ?? defaultExpiryDuration)
                ExpirySuffix.append(expiry, to: &loaded.mirror)
            }
            try commitAppend(files, from: start)
            let slot = ValueSlot(
                keyStart: UInt32(keyStart), valueStart: UInt32(valueStart), valueLength: UInt32(valueLength),
                keyLength: UInt16(keyLength), keyOffset: UInt8(keyStart - start))
            let replaced = loaded.withMirrorAndIndex { bytes, index in index.update(slot, in: bytes) }
            if examinesCurrent {
                loaded.mirror.withUnsafeBytes { bytes in
                    let range = replaced.flatMap { old in
                        loaded.expiryEnabled
                            ? liveValueRange(old, now: configuration.clock.now(), in: bytes) : old.valueRange
                    }
                    examine(range.map { UnsafeRawBufferPointer(rebasing: bytes[$0]) })
                }
            }
            recorded()
        }
    }

    /// Appends the `count` bytes that `write` puts in place (given where they start) to `bytes`:
    /// written into a temporary buffer (on the stack when small) and appended from there, as an
    /// array cannot grow by bytes it has not initialized.
    private static func appendWritten(_ count: Int, to bytes: inout [UInt8], _ write: (UnsafeMutableRawPointer) -> Void)
    {
        withUnsafeTemporaryAllocation(byteCount: count, alignment: 1) { buffer in
            guard let base = buffer.baseAddress else { return }
            write(base)
            bytes.append(contentsOf: UnsafeRawBufferPointer(buffer))
        }
    }

    /// Removes `key` with a deletion record; an absent key is not an error.
    func removeValue(forKey key: String) throws(MappedKVError) {
        try Self.validate(key: key)
        // The key's bucket travels from memory while the lock is taken.
        Self.withBytes(of: key) { loaded.index.prefetchHome(of: $0) }
        let keyLength = key.utf8.count
        let recordLength = Record.encodedSize(keyLength: keyLength, valueLength: 0)
        try writing(appendingAtMost: recordLength) { (files) throws(MappedKVError) in
            let removed = loaded.withMirrorAndIndex { bytes, index in
                Self.withBytes(of: key) { index.remove($0, in: bytes) }
            }
            guard removed != nil else { return }
            // A legacy encrypted store (no random IV yet) is rewritten with one, as a set does:
            // appending would raise the meta version without storing an IV for the region.
            if recordLength < spaceLeft(files) && !needsRandomIV {
                let start = loaded.mirror.count
                Self.withBytes(of: key) { Record.appendDeletion(key: $0, to: &loaded.mirror) }
                try commitAppend(files, from: start)
            } else if loaded.index.isEmpty {
                try clearAll()
            } else if !needsRandomIV,
                let newSize = try sizeForGrowthWithoutCompaction(files, incomingLength: recordLength)
            {
                // A compaction would grow the file too: growing alone costs no rewrite (FORMAT.md 2.10).
                try grow(files, to: newSize)
                let start = loaded.mirror.count
                Self.withBytes(of: key) { Record.appendDeletion(key: $0, to: &loaded.mirror) }
                try commitAppend(files, from: start)
            } else {
                // The compaction drops the key, so no deletion record is needed.
                try writeBack(files, incomingLength: 0, needSync: true)
            }
        }
    }

    /// Checks a key's length: 1 byte to ``RecordLimits/maximumKeyLength``; returns it.
    @discardableResult
    static func validate(key: String) throws(MappedKVError) -> Int {
        let length = key.utf8.count
        try validate(keyLength: length)
        return length
    }

    /// Checks a key's length in bytes: 1 to ``RecordLimits/maximumKeyLength``.
    static func validate(keyLength length: Int) throws(MappedKVError) {
        guard length > 0 else { throw .invalidKey("key is empty") }
        guard length <= RecordLimits.maximumKeyLength else {
            throw .invalidKey("key is \(length) bytes; the limit is \(RecordLimits.maximumKeyLength)")
        }
    }

    /// The bytes between the end of the region and the end of the data file.
    func spaceLeft(_ files: StoreFiles) -> Int { files.dataFileSize - 4 - loaded.mirror.count }

    /// Writes `mirror[start...]` to the file (encrypted by continuing the stream, for an encrypted
    /// store) and updates the CRC and size in the meta (two 4-byte stores).
    ///
    /// An encryption failure closes the store (its cipher stream is lost) and commits nothing: the
    /// meta still records the old size and CRC.
    func commitAppend(_ files: StoreFiles, from start: Int) throws(MappedKVError) {
        // The region is read while it is written out; the meta changes once that read is over.
        let (crc, length) = try loaded.mirror.withRawBytes { (bytes) throws(MappedKVError) -> (UInt32, Int) in
            let stored: UnsafeRawBufferPointer
            do throws(CryptoFailure) {
                stored = try files.writeRegion(
                    UnsafeRawBufferPointer(rebasing: bytes[start...]), at: start, encryptingWith: loaded.cipher)
            } catch {
                throw poison(.crypto(error.description))
            }
            return (CRC32.update(loaded.meta.crcDigest, stored), bytes.count)
        }
        if loaded.meta.version >= .flag {
            // The common case: two 4-byte stores, without copying the meta struct.
            loaded.meta.crcDigest = crc
            loaded.meta.actualSize = UInt32(length)
            files.writeCRCAndSize(crc: crc, actualSize: UInt32(length))
        } else {
            let write = loaded.meta.update(actualSize: UInt32(length), crc: crc, increasesSequence: false)
            files.writeMeta(loaded.meta, write)
        }
        loaded.recordCount += 1
        observed = files.metaStamp()
    }
}
