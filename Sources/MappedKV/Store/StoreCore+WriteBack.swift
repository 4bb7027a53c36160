import MappedKVCrypto
import MappedKVFormat
import MappedKVIO

// Whole-file changes: compaction, growth and every rewrite of the region.
//
// A rewrite is crash-safe through the write-back journal (docs/FORMAT.md section 8): the new
// region and meta are written to `<data file>.writeback` first, then a marker sequence, then the
// region in place, then the whole meta with its sequence last. A process killed anywhere in
// between leaves files that the next load (in any process) either finishes from the journal or
// finds untouched. After a rewrite, mirror, index, meta and cipher describe the new region.
extension StoreCore {
    /// How a rewrite changes each value (for turning key expiry on or off).
    enum ValueTransform {
        /// Append an expiry suffix with this time to every value.
        case addExpiry(UInt32)
        /// Remove the last 4 bytes of every value.
        case removeExpiry
    }

    /// An encrypted store whose meta predates random IVs (version < 2) is rewritten with one, as MMKV does.
    var needsRandomIV: Bool { loaded.cipher != nil && loaded.meta.version < .randomIV }

    /// A fresh IV and a stream from it, for an encrypted store; nil for a plain one.
    func freshCipher() throws(MappedKVError) -> (iv: InitializationVector, stream: CFBStream)? {
        guard let key = cryptKey else { return nil }
        return try cryptoCall { () throws(CryptoFailure) in
            let bytes = try SecureRandom.bytes(16)
            guard let iv = InitializationVector(bytes) else { return nil }
            return (iv, try CFBStream(key: key.aesKey, iv: bytes))
        }
    }

    /// Makes room for a record of `incomingLength` bytes that does not fit. A region of live
    /// records only would be rewritten byte for byte, so instead the file just grows by MMKV's
    /// doubling rule and the sequence increments (other processes remap); the records stay where
    /// they are and nothing but the file size changes on disk. The same holds when the region has
    /// dead records but compacting it would have to grow the file too (docs/FORMAT.md 2.10): the
    /// file grows to the size the compaction would have chosen and the dead records stay until the
    /// next time it fills. Otherwise (or when values may have expired) the region is compacted by a
    /// full write-back, as MMKV does.
    func makeRoom(_ files: StoreFiles, incomingLength: Int, incomingCount: Int = 1) throws(MappedKVError) {
        if let newSize = try sizeForGrowthWithoutCompaction(
            files, incomingLength: incomingLength, incomingCount: incomingCount)
        {
            return try grow(files, to: newSize)
        }
        // A compaction; one that comes again and again leaves more room each time (FORMAT.md 2.10).
        let reserve = FileSizePolicy.reserveForCompaction(after: compactionsForRoom, pageSize: pageSize)
        compactionsForRoom += 1
        try writeBack(
            files, incomingLength: incomingLength, incomingCount: incomingCount, needSync: true, reserve: reserve)
    }

    /// The size to grow the data file to, keeping every record where it is, for a record of
    /// `incomingLength` bytes: MMKV's size for the live records alone, when that is a growth and
    /// the whole region fits in it with the record; nil when the region must be compacted instead.
    func sizeForGrowthWithoutCompaction(
        _ files: StoreFiles, incomingLength: Int, incomingCount: Int = 1
    ) throws(MappedKVError) -> Int? {
        guard !loaded.expiryEnabled else { return nil }
        guard
            let size = FileSizePolicy.sizeForWriteBack(
                fileSize: files.dataFileSize, liveLength: holderLength + loaded.index.recordBytes,
                incomingLength: incomingLength, incomingCount: incomingCount, liveCount: loaded.index.count,
                needSync: true,
                pageSize: pageSize)
        else {
            throw .regionFull
        }
        guard size > files.dataFileSize, 4 + loaded.mirror.count + incomingLength < size else { return nil }
        return size
    }

    /// Grows the data file to `newSize` without touching the region, and announces it.
    func grow(_ files: StoreFiles, to newSize: Int) throws(MappedKVError) {
        try files.resizeData(to: newSize)
        files.announceResize(&loaded.meta)
        observed = files.metaStamp()
        loaded.mirror = loaded.mirror.withUnsafeBytes { MirrorBuffer.make(copying: $0, capacity: newSize - 4) }
        logger.debug(
            "grew the data file",
            metadata: ["id": "\(location.id)", "fileSize": "\(newSize)", "sequence": "\(loaded.meta.sequence)"])
    }

    /// A full write-back sized by MMKV's growth rule for an incoming record of `incomingLength`
    /// bytes, leaving at least `reserve` bytes free; `transform`, `flags` and `staleEnd` as ``rewrite(_:needSync:transform:flags:staleEnd:chooseFileSize:)``.
    func writeBack(
        _ files: StoreFiles, incomingLength: Int, incomingCount: Int = 1, needSync: Bool,
        transform: ValueTransform? = nil, flags: MetaFlags? = nil, staleEnd: Int? = nil, reserve: Int = 0
    ) throws(MappedKVError) {
        let currentSize = files.dataFileSize
        let liveCount = loaded.index.count
        let page = pageSize
        try rewrite(files, needSync: needSync, transform: transform, flags: flags, staleEnd: staleEnd) { length in
            FileSizePolicy.sizeForWriteBack(
                fileSize: currentSize, liveLength: length, incomingLength: incomingLength, incomingCount: incomingCount,
                liveCount: liveCount, needSync: needSync, pageSize: page, reserve: reserve)
        }
    }

    /// Writes a recovered state back as a fresh region (the damaged files were copied aside):
    /// every stale byte past it is zeroed and the sequence increments, so the files are sound again.
    func writeRecovery(_ files: StoreFiles) throws(MappedKVError) {
        if try files.ensureSizes(minimumDataSize: expectedCapacity, pageSize: pageSize) {
            files.announceResize(&loaded.meta)
        }
        try writeBack(files, incomingLength: 0, needSync: true, staleEnd: max(0, files.dataFileSize - 4))
        logger.error(
            "recovered store written back",
            metadata: ["id": "\(location.id)", "keys": "\(loaded.index.count)", "sequence": "\(loaded.meta.sequence)"])
    }

    /// Carries out a whole-file change crash-safely (see ``WriteBackJournal``): the journal, any
    /// growth, the marker sequence, then the in-place rewrite and the new meta, then the journal's
    /// removal. A failure before the marker changes nothing; after it, the store closes and the
    /// next load (in any process) finishes the write-back from the journal.
    func commit(_ files: StoreFiles, _ journal: WriteBackJournal, staleEnd: Int, sync: Bool) throws(MappedKVError) {
        metrics?.countWriteBack()
        try files.writeJournal(journal, sync: sync)
        do {
            if journal.fileSize > UInt64(files.dataFileSize) { try files.resizeData(to: Int(journal.fileSize)) }
        } catch {
            try? files.removeJournal()
            throw error
        }
        do {
            files.writeSequence(journal.markerSequence)
            if sync { try files.synchronizeMeta() }
            try files.applyWriteBack(journal, staleEnd: staleEnd, sync: sync)
        } catch {
            throw poison(error)
        }
        do { try files.removeJournal() } catch {
            // Harmless: the sequence has moved past the marker, so the next load ignores it.
            logger.warning(
                "could not remove the write-back journal", metadata: ["id": "\(location.id)", "error": "\(error)"])
        }
        observed = files.metaStamp()
        tracking.rewroteRegion = true
    }

    /// Rewrites the data region as a fresh holder plus every live record (expired ones dropped,
    /// values transformed if asked), sizes the file with `chooseFileSize(newLength)`, and stores the
    /// whole meta with the sequence incremented and, if given, new flags (version exactly 4).
    func rewrite(
        _ files: StoreFiles, needSync: Bool, transform: ValueTransform? = nil, flags: MetaFlags? = nil,
        staleEnd: Int? = nil, chooseFileSize: (Int) -> Int?
    ) throws(MappedKVError) {
        if loaded.expiryEnabled { dropExpiredKeys() }  // as MMKV's filterExpiredKeys does
        let holder = ItemSizeHolder.random()
        let fresh: [UInt8]
        let newFileSize: Int
        var plan: CompactionPlan?
        var rebuilt: KeyIndex?
        if transform == nil,
            let compaction = loaded.mirror.withUnsafeBytes({ CompactionPlan(region: $0, slots: loaded.index) })
        {
            // Copy the runs of live records, in file order, into a mirror sized for the new file.
            let length = holder.count + compaction.liveLength
            guard let size = chooseFileSize(length) else { throw .regionFull }
            fresh = loaded.mirror.withUnsafeBytes { old in
                MirrorBuffer.make(capacity: max(length, size - 4)) { base in
                    holder.withUnsafeBytes { base.copyMemory(from: $0.baseAddress!, byteCount: holder.count) }
                    var written = holder.count
                    for run in compaction.runs {
                        (base + written).copyMemory(from: old.baseAddress! + run.start, byteCount: run.length)
                        written += run.length
                    }
                    return written
                }
            }
            newFileSize = size
            plan = compaction
        } else {
            let region = transformedRegion(holder: holder, transform: transform)
            guard let size = chooseFileSize(region.bytes.count) else { throw .regionFull }
            fresh = region.bytes.withUnsafeBytes { MirrorBuffer.make(copying: $0, capacity: size - 4) }
            newFileSize = size
            rebuilt = region.index
        }
        // An encrypted region is one stream from a fresh IV at position 0.
        let newCipher = try freshCipher()
        var stored = fresh  // shares the storage unless it is encrypted
        if let newCipher { try cryptoCall { () throws(CryptoFailure) in try newCipher.stream.encrypt(&stored) } }
        let crc = stored.withUnsafeBytes { CRC32.update(0, $0) }
        var newMeta = loaded.meta
        _ = newMeta.update(actualSize: UInt32(fresh.count), crc: crc, iv: newCipher?.iv, increasesSequence: true)
        // A plain store keeps no IV: a stale one (left by a rekey to plain text) would make a
        // load without a key take it for an encrypted store (docs/FORMAT.md 7.5a).
        if newCipher == nil { newMeta.iv = .zero }
        if let flags {
            newMeta.flags = flags
            newMeta.version = .flag
        }
        // Old records past the new end would stay readable (in plain text, after encrypting a
        // plain store); MMKV leaves them, the commit erases them.
        let journal = WriteBackJournal(
            base: files.metaStamp(), fileSize: UInt64(newFileSize), meta: newMeta, region: stored)
        // MMKV does not flush the write-back of a first insert (`needSync`, which also sizes the
        // file). Skipping the flush is safe only when the old region is empty: a rewrite of a
        // region that held records, dead ones included, must reach the disk before its meta, or
        // a power loss could leave the old checkpoints describing bytes that are gone.
        try commit(files, journal, staleEnd: staleEnd ?? loaded.mirror.count, sync: needSync || !loaded.mirror.isEmpty)
        loaded.meta = newMeta
        loaded.mirror = fresh
        if let plan {
            let holderLength = holder.count
            loaded.index.relocateRecords { start in holderLength + plan.newStart(ofRecordAt: start) }
        } else if let rebuilt {
            loaded.index = rebuilt
        }
        if let newCipher { loaded.cipher = newCipher.stream }
        if let flags { loaded.expiryEnabled = flags.contains(.keyExpiry) }
        loaded.recordCount = loaded.index.count
        logger.debug(
            "full write-back",
            metadata: [
                "id": "\(location.id)", "keys": "\(loaded.index.count)", "actualSize": "\(fresh.count)",
                "fileSize": "\(files.dataFileSize)", "sequence": "\(loaded.meta.sequence)",
            ])
    }

    /// The live records re-encoded one by one after `holder`, in file order, with each value
    /// transformed, and an index of them.
    private func transformedRegion(
        holder: [UInt8], transform: ValueTransform?
    ) -> (bytes: [UInt8], index: KeyIndex) {
        var copy = holder
        var newIndex = KeyIndex(minimumCapacity: loaded.index.count, hasher: loaded.index.hasher)
        loaded.mirror.withUnsafeBytes { old in
            for slot in loaded.index.slots(in: old).sorted(by: { $0.keyStart < $1.keyStart }) {
                let start = copy.count
                let key = UnsafeRawBufferPointer(rebasing: old[slot.keyRange])
                var value = Array(old[slot.valueRange])
                switch transform {
                case .addExpiry(let time): ExpirySuffix.append(time, to: &value)
                case .removeExpiry: if value.count > ExpirySuffix.length { value.removeLast(ExpirySuffix.length) }
                case nil: break
                }
                value.withUnsafeBytes { Record.append(key: key, value: $0, to: &copy) }
                let keyStart = start + Varint.size(of: UInt64(key.count))
                let valueStart = copy.count - value.count
                var newSlot = ValueSlot(
                    keyStart: UInt32(keyStart), valueStart: UInt32(valueStart), valueLength: UInt32(value.count),
                    keyLength: slot.keyLength, keyOffset: UInt8(keyStart - start))
                newSlot.keyIsRepaired = slot.keyIsRepaired
                newIndex.insertNew(newSlot, hash: newIndex.hash(of: slot, in: old))
            }
        }
        return (copy, newIndex)
    }
}
