import MappedKVFormat
import MappedKVIO
import Synchronization

// Reading through the mappings (docs/FORMAT.md 12.5): after a ``MappedOpen``, gets, `contains`
// and `count` find keys in the mapped index file and, for records written since its state, in
// ``StoreCore/LoadedRegion/index`` (then an overlay that keeps deletions), and decode values from the shared
// data mapping. ``StoreCore/LoadedRegion/mirror`` stays empty. Everything else (writes, walks, exclusive
// sections) first leaves this mode: it reloads the private state as any open would.
//
// A read in a multi-process store checks the meta's sequence after it has decoded: every
// in-place rewrite by the processes that may share such a store stores a new sequence before it
// touches the region (the journal's marker, FORMAT.md 8.3), so an unchanged sequence means the
// bytes read were not being rewritten; a changed one sends the read back through the catch-up.
// No process shrinks the data file while another reads through its mapping (the reader lock of
// 12.5), so a read never faults past the file's end.
extension StoreCore {
    /// Takes the state of `open`: the store reads through its mappings from now on.
    func adoptMapped(_ open: MappedOpen, _ files: StoreFiles) {
        loaded = LoadedRegion(open)
        mappedReads = MappedReads(isActive: true, file: open.file, pages: open.pages, liveCount: open.liveCount)
        findings.indexOutcome = .mapped
        tracking.indexFileStamp = open.file.header.stamp
        observed = open.stamp
        isMemoryReleased = false
    }

    /// Tries to read `files` through their mappings; false leaves the state as it was.
    func enterMappedReads(_ files: StoreFiles) -> Bool {
        guard MappedOpen.isEligible(configuration, files: files, encrypted: cryptKey != nil),
            let open = MappedOpen.attempt(files, key: cryptKey, path: location.indexPath, logger: logger)
        else { return false }
        if isMultiProcess, !files.holdMappedReaderLock() { return false }
        adoptMapped(open, files)
        return true
    }

    /// Stops reading through the mappings and loads the private state instead, under the lock
    /// the caller holds (any, in multi-process mode); with `decoding`, from the log alone (the
    /// index file was found damaged).
    func leaveMappedReads(_ files: StoreFiles, decoding: Bool = false) throws(MappedKVError) {
        guard mappedReads.isActive else { return }
        dropMappedReads(files)
        if decoding {
            tracking.skipsIndexFileOnce = true
            tracking.indexFileStamp = nil  // so that this process writes a sound one
        }
        defer { tracking.skipsIndexFileOnce = false }
        try reload(files, key: cryptKey, policy: .consult(configuration.recoveryHandler), allowsMapped: false)
    }

    /// ``leaveMappedReads(_:decoding:)`` for a caller that holds no lock.
    func leaveMappedReadsUnderSharedLock(_ files: StoreFiles, decoding: Bool = false) throws(MappedKVError) {
        if isMultiProcess { _ = try takeLock(files, .shared) }
        defer { if isMultiProcess { releaseLock(.shared) } }
        try leaveMappedReads(files, decoding: decoding)
    }

    /// Forgets the mapped state (the private state is empty until the caller loads it).
    func dropMappedReads(_ files: StoreFiles?) {
        guard mappedReads.isActive else { return }
        if let file = mappedReads.file.take() { MappedIndexFile.retire(consume file) }
        mappedReads = MappedReads()
        loaded.index = KeyIndex()
        if isMultiProcess { files?.releaseMappedReaderLock() }
    }

    /// Reads `key` through the mappings: `body` gets the region and the live value range (nil:
    /// absent or expired). Returns nil if the store left mapped reads meanwhile, for the caller
    /// to read as usual.
    @inline(never)
    func readMapped<R>(
        forKey key: String, _ body: (UnsafeRawBufferPointer, Range<Int>?) throws(FormatError) -> R
    ) throws(MappedKVError) -> Result<R, FormatError>? {
        try readMapped(
            lookingUp: { file, region in
                Self.withBytes(of: key) { mappedValueRange(forKey: $0, file: file, in: region) }
            },
            body)
    }

    /// ``readMapped(forKey:_:)`` of a key given as its UTF-8 bytes.
    @inline(never)
    func readMapped<R>(
        forKeyBytes key: UnsafeRawBufferPointer, _ body: (UnsafeRawBufferPointer, Range<Int>?) throws(FormatError) -> R
    ) throws(MappedKVError) -> Result<R, FormatError>? {
        try readMapped(lookingUp: { file, region in mappedValueRange(forKey: key, file: file, in: region) }, body)
    }

    @inline(__always)  // as readingMapped
    private func readMapped<R>(
        lookingUp lookup: (MappedIndexFile, MappedPlaintext) -> MappedLookup,
        _ body: (UnsafeRawBufferPointer, Range<Int>?) throws(FormatError) -> R
    ) throws(MappedKVError) -> Result<R, FormatError>? {
        try readingMapped { file, region in
            guard case .found(let range) = lookup(file, region) else { return nil }
            return Result { () throws(FormatError) in try body(region.bytes, range) }
        }
    }

    /// Runs `read` on the mapped state and returns what it returns, after the checks every read
    /// through the mappings makes: a read that another process's rewrite may have torn (the
    /// sequence moved meanwhile) runs again after the catch-up. `read` returns nil when the index
    /// file is damaged where it looked, or a page could not be decrypted; the store then leaves
    /// this mode. Nil: the store is not (or no longer) in this mode, for the caller to read as usual.
    // Inlined into each read, with its closure: the open-scaling bench's mapped gets at 10^4 keys.
    @inline(__always)
    func readingMapped<R>(_ read: (MappedIndexFile, MappedPlaintext) -> R?) throws(MappedKVError) -> R? {
        while mappedReads.isActive {
            guard let files = lifecycle.files else {
                throw .closed(lifecycle.closedReason ?? "store '\(location.id)' was closed")
            }
            let stamp = files.metaStamp()
            if isMultiProcess, stamp != observed {
                try catchUpMappedUnderSharedLock(files)
                continue
            }
            guard let file = mappedReads.file else { return nil }
            let region = MappedPlaintext(
                region: UnsafeRawBufferPointer(rebasing: files.dataFileBytes[4..<(4 + Int(observed.actualSize))]),
                pages: mappedReads.pages)
            guard let result = read(file, region) else {
                // A damaged page of the index file, or a page of an encrypted region that could
                // not be decrypted: read as if the store had no index file.
                logger.warning("index file damaged: loading the store", metadata: ["id": "\(location.id)"])
                try leaveMappedReadsUnderSharedLock(files, decoding: true)
                return nil
            }
            if isMultiProcess {
                atomicMemoryFence(ordering: .acquiring)
                if files.metaStamp().sequence != stamp.sequence { continue }
            }
            return result
        }
        return nil
    }

    /// The number of live keys read through the mappings, or nil if the store is not in that
    /// mode or must count expiry times (which only the walk of the private state does).
    func countMapped() throws(MappedKVError) -> Int? {
        guard mappedReads.isActive, !loaded.expiryEnabled, let files = lifecycle.files else { return nil }
        if isMultiProcess, files.metaStamp() != observed { try catchUpMappedUnderSharedLock(files) }
        return mappedReads.isActive ? mappedReads.liveCount : nil
    }

    /// A copy of the bytes value at `range` of `region` (nil: absent), for a caller that hands the
    /// bytes on: a copy made inside ``readMapped(forKey:_:)`` is checked for a torn read before
    /// anything of it leaves the store.
    static func copiedBytesValue(
        _ region: UnsafeRawBufferPointer, _ range: Range<Int>?
    ) throws(FormatError) -> [UInt8]? {
        guard let range else { return nil }
        var cursor = ByteCursor(UnsafeRawBufferPointer(rebasing: region[range]))
        let length = try cursor.readLength()
        return Array(try cursor.readBytes(length))
    }

    /// What a lookup through the mappings found.
    enum MappedLookup {
        /// The live value range, or nil for an absent or expired key.
        case found(Range<Int>?)
        /// The index file is damaged where the lookup needed it.
        case damaged
    }

    /// The live value range of `key` (its UTF-8 bytes): the overlay's record if it has one (a
    /// deletion: absent), else the mapped buckets'.
    // Inlined into each read: the open-scaling bench's mapped gets at 10^4 keys.
    @inline(__always)
    func mappedValueRange(
        forKey key: UnsafeRawBufferPointer, file: MappedIndexFile, in plaintext: MappedPlaintext
    ) -> MappedLookup {
        let region = plaintext.bytes
        let slot: ValueSlot
        // The overlay is usually empty: then no hash of the key with its seed is taken.
        if !loaded.index.isEmpty, let recent = loaded.index.slot(for: key, in: region) {
            guard recent.valueLength > 0 else { return .found(nil) }
            slot = recent
        } else {
            switch file.slot(for: key, in: plaintext) {
            case .found(let stored): slot = stored
            case .absent: return .found(nil)
            case .damaged: return .damaged
            }
        }
        guard loaded.expiryEnabled else { return .found(slot.valueRange) }
        return .found(liveValueRange(slot, now: configuration.clock.now(), in: region))
    }

    private func catchUpMappedUnderSharedLock(_ files: StoreFiles) throws(MappedKVError) {
        _ = try takeLock(files, .shared)
        defer { releaseLock(.shared) }
        try catchUpMapped(files)
    }

    /// ``catchUp(_:)`` of a store reading through its mappings, under a lock: records appended
    /// by another process go into the overlay; anything else maps the index file again if it
    /// describes the new state, or leaves this mode.
    func catchUpMapped(_ files: StoreFiles) throws(MappedKVError) {
        let stamp = files.metaStamp()
        let fileSize = try files.currentDataFileSize()
        guard stamp != observed || fileSize != files.dataFileSize else { return }
        tracking.publishesObserved = false
        defer {
            tracking.publishesObserved = true
            publishObserved()
        }
        if fileSize != files.dataFileSize { try files.refreshMappings() }
        let change: ExternalChange.Kind
        if let records = appendMappedTail(files, stamp) {
            change = .appended(records: records)
        } else {
            dropMappedReads(files)
            try reload(files, key: cryptKey, policy: .consult(configuration.recoveryHandler), allowsMapped: true)
            change = .reloaded
        }
        metrics?.countCatchUp(change)
        tracking.pendingChanges.append(
            ExternalChange(storeID: location.id, kind: change, sequence: loaded.meta.sequence, records: nil))
        signal.pending.store(true, ordering: .sequentiallyConsistent)
    }

    /// Files the records another process appended in the overlay, if the sequence is the same
    /// and the new bytes extend the CRC to the stored one; how many, or nil.
    private func appendMappedTail(_ files: StoreFiles, _ stamp: MetaStamp) -> Int? {
        let oldLength = Int(observed.actualSize)
        let newLength = Int(stamp.actualSize)
        guard let file = mappedReads.file, stamp.sequence == observed.sequence, loaded.meta.holdsActualSize,
            newLength > oldLength,
            4 + newLength <= files.dataFileSize
        else { return nil }
        let region = UnsafeRawBufferPointer(rebasing: files.dataFileBytes[4..<(4 + newLength)])
        let tail = UnsafeRawBufferPointer(rebasing: region[oldLength...])
        guard CRC32.update(observed.crcDigest, tail) == stamp.crcDigest else { return nil }
        if let pages = mappedReads.pages {
            guard let key = cryptKey else { return nil }
            if newLength > pages.capacity {
                // The file grew past the buffer: a larger one, with the overlay's records in it.
                guard
                    let larger = DecryptedPages(
                        key: key, iv: loaded.meta.regionIV(for: key), capacity: files.dataFileSize - 4),
                    MappedPlaintext(region: region, pages: larger).prepare(
                        Int(file.header.stamp.actualSize)..<oldLength)
                else { return nil }
                mappedReads.pages = larger
            } else {
                pages.forget(from: oldLength)
            }
        }
        var open = MappedOpen(
            file: file, meta: loaded.meta, dataHeader: loaded.header, stamp: stamp, overlay: loaded.index,
            liveCount: mappedReads.liveCount,
            recordCount: loaded.recordCount, pages: mappedReads.pages)
        guard
            let records = open.fileRecords(
                in: MappedPlaintext(region: region, pages: mappedReads.pages), from: oldLength)
        else { return nil }
        loaded.index = open.overlay
        mappedReads.liveCount = open.liveCount
        loaded.recordCount = open.recordCount
        loaded.meta.crcDigest = stamp.crcDigest
        loaded.meta.actualSize = stamp.actualSize
        observed = stamp
        return records
    }
}
