import Glibc
import MappedKVCrypto
import MappedKVFormat
import MappedKVIO
import Synchronization

/// The two open, mapped files of a store.
///
/// Every write to either file and every read of the meta struct goes through this type, so the
/// multi-process layer has one place to lock, check and remap.
final class StoreFiles {
    let location: StoreLocation
    let isReadOnly: Bool
    private(set) var dataFile: FileDescriptor
    private(set) var metaFile: FileDescriptor
    private let data: MappedRegion
    private let meta: MappedRegion
    private var isOpen = true
    /// The inter-process lock: `flock` on the meta file (docs/FORMAT.md 6.1), or the shared-memory lock (6.6).
    let lock: StoreLock
    /// The data file's device and inode, which identify the store within a process.
    let identity: FileIdentity
    /// Where the crash-simulation tests collect this store's writes; nil outside them.
    let recorder: WriteRecorder?
    /// Whether this open created the files (or one of them), whose names are then not yet on disk.
    let createdFiles: Bool

    /// Takes over files opened, locked and mapped by ``open(_:readOnly:multiProcess:processLock:createsIfMissing:)``.
    init(
        location: StoreLocation, isReadOnly: Bool, dataFile: FileDescriptor, metaFile: FileDescriptor,
        data: MappedRegion, meta: MappedRegion, lock: StoreLock, identity: FileIdentity, createdFiles: Bool = false
    ) {
        self.createdFiles = createdFiles
        self.location = location
        self.isReadOnly = isReadOnly
        self.dataFile = dataFile
        self.metaFile = metaFile
        self.data = data
        self.meta = meta
        self.lock = lock
        self.identity = identity
        self.recorder = WriteRecorder.recorder(for: location.dataPath)
    }

    deinit { close() }

    /// Unmaps and closes both files.
    func close() {
        guard isOpen else { return }
        isOpen = false
        data.unmap()
        meta.unmap()
        dataFile.close()
        metaFile.close()  // which releases the flock; the shared-memory lock is released by hand
        if case .sharedMemory(let lock) = lock { lock.releaseAll() }
    }

    // MARK: Reading

    /// The data file's mapped size.
    var dataFileSize: Int { data.length }
    /// The meta file's mapped size.
    var metaFileSize: Int { meta.length }

    /// The whole mapped data file, header included.
    var dataFileBytes: UnsafeRawBufferPointer { UnsafeRawBufferPointer(data.bytes) }

    /// The sequence, CRC and size in the shared meta mapping: three loads, no system call.
    func metaStamp() -> MetaStamp {
        guard meta.length >= MetaInfo.size else { return MetaStamp(sequence: 0, crcDigest: 0, actualSize: 0) }
        return MetaStamp(stored: UnsafeRawBufferPointer(meta.bytes))
    }

    /// Whether the data file still has a name: false once it was deleted (its inode number may
    /// then be reused by a new file, which must not be mistaken for this one).
    var isLinked: Bool { ((try? dataFile.linkCount()) ?? 0) > 0 }

    /// A read-only mapping of the meta struct of its own, for ``ObservedStamp``: unlike the
    /// store's mapping it is never remapped, so it may be read without the store's mutex. Nil if
    /// the meta file is too short to hold the struct or cannot be mapped (the stamp is then
    /// always checked under the mutex).
    ///
    /// It maps a second open of the same file (through `/proc/self/fd`, so the same inode even if
    /// the name was replaced), closed at once: a mapping keeps its open file description alive, and
    /// the mode lock and `flock` belong to the store's description, which must go when the store
    /// closes, however long this mapping lives.
    func metaStructMapping() -> MappedRegion? {
        guard ((try? metaFile.size()) ?? 0) >= MetaInfo.size,
            let second = try? FileDescriptor.open("/proc/self/fd/\(metaFile.rawValue)", access: .readOnly)
        else { return nil }
        defer { second.close() }
        return try? MappedRegion(file: second, length: MetaInfo.size, writable: false)
    }

    /// The data file's size on disk now (`fstat`), which another process may have changed.
    func currentDataFileSize() throws(MappedKVError) -> Int {
        try systemCall { () throws(SystemError) in try dataFile.size() }
    }

    /// Remaps either file whose size on disk differs from its mapping. Call it under the lock,
    /// before reading anything another process may have resized.
    func refreshMappings() throws(MappedKVError) {
        try systemCall { () throws(SystemError) in
            let dataSize = try dataFile.size()
            if dataSize != data.length { try data.remap(file: dataFile, length: dataSize) }
            let metaSize = try metaFile.size()
            if metaSize != meta.length { try meta.remap(file: metaFile, length: metaSize) }
        }
    }

    /// The whole mapped meta file.
    var metaFileBytes: UnsafeRawBufferPointer { UnsafeRawBufferPointer(meta.bytes) }

    // MARK: Writing

    /// Grows each file to a whole number of pages, at least `minimumDataSize` and one page.
    /// Only bytes past the current end are added; nothing existing is overwritten.
    ///
    /// - Returns: whether a data file that already had a size was resized (other processes may map
    ///   it, so the caller must increment the sequence).
    @discardableResult
    func ensureSizes(minimumDataSize: Int, pageSize: Int) throws(MappedKVError) -> Bool {
        try ensureMetaSize(pageSize: pageSize)
        let dataTarget = max(minimumDataSize, PageSize.roundUp(data.length, pageSize: pageSize))
        guard data.length < dataTarget || data.length % pageSize != 0 else { return false }
        let hadSize = data.length > 0
        try resizeData(to: PageSize.roundUp(dataTarget, pageSize: pageSize))
        return hadSize
    }

    /// Grows the meta file to a whole number of pages, at least one; nothing existing is overwritten.
    func ensureMetaSize(pageSize: Int) throws(MappedKVError) {
        precondition(!isReadOnly)
        guard meta.length < pageSize || meta.length % pageSize != 0 else { return }
        let target = PageSize.roundUp(max(meta.length, pageSize), pageSize: pageSize)
        try systemCall { () throws(SystemError) in
            try metaFile.allocate(upTo: target)
            try meta.remap(file: metaFile, length: target)
        }
        recorder?.record(.metaSize(target))
    }

    /// Sets the data file's size and remaps it. Growth reserves disk blocks; bytes past the old end read as zeros.
    /// A shrink is skipped while another process reads through its mapping of the file
    /// (``holdMappedReaderLock()``): its reads would fault past the new end. The file then keeps
    /// its size, which the meta does not record.
    func resizeData(to size: Int) throws(MappedKVError) {
        precondition(!isReadOnly)
        if size < data.length, mappedReadersPresent() { return }
        try systemCall { () throws(SystemError) in
            if size > data.length {
                try dataFile.allocate(upTo: size)
            } else {
                try dataFile.truncate(to: size)
            }
            try data.remap(file: dataFile, length: size)
        }
        recorder?.record(.dataSize(size))
    }

    /// Copies `bytes` into the data region at `offset` (file offset `4 + offset`), as they are, and
    /// returns the stored bytes (for the CRC).
    @discardableResult
    func writeRegion(_ bytes: UnsafeRawBufferPointer, at offset: Int) -> UnsafeRawBufferPointer {
        let destination = regionDestination(offset: offset, count: bytes.count)
        if let source = bytes.baseAddress, let target = destination.baseAddress {
            target.copyMemory(from: source, byteCount: bytes.count)
        }
        return recordRegionWrite(destination, offset: offset)
    }

    /// Copies `bytes` into the data region at `offset` (file offset `4 + offset`), encrypting them
    /// by continuing `cipher` if one is given, and returns the stored bytes (for the CRC).
    ///
    /// - Throws: ``CryptoFailure`` if the encryption fails; the bytes at `offset` are then unspecified
    ///   (past the committed size, so no reader sees them) and `cipher` must not be used again.
    @discardableResult
    func writeRegion(
        _ bytes: UnsafeRawBufferPointer, at offset: Int, encryptingWith cipher: CFBStream?
    ) throws(CryptoFailure) -> UnsafeRawBufferPointer {
        guard let cipher else { return writeRegion(bytes, at: offset) }
        let destination = regionDestination(offset: offset, count: bytes.count)
        if !bytes.isEmpty { try cipher.encrypt(bytes, into: destination) }  // the file never holds the plain text
        return recordRegionWrite(destination, offset: offset)
    }

    /// The mapped bytes of the data region at `offset`, `count` long.
    ///
    /// - Precondition: the store is writable and the range lies within the mapping (the callers
    ///   grow the file first).
    private func regionDestination(offset: Int, count: Int) -> UnsafeMutableRawBufferPointer {
        precondition(!isReadOnly && 4 + offset + count <= data.length, "write past the mapped data file")
        guard count > 0 else { return UnsafeMutableRawBufferPointer(start: nil, count: 0) }
        return UnsafeMutableRawBufferPointer(rebasing: data.bytes[(4 + offset)..<(4 + offset + count)])
    }

    /// Records a region write for the crash tests and returns the written bytes.
    private func recordRegionWrite(_ written: UnsafeMutableRawBufferPointer, offset: Int) -> UnsafeRawBufferPointer {
        if !written.isEmpty {
            recorder?.record(.data(offset: 4 + offset, bytes: Array(UnsafeRawBufferPointer(written))))
        }
        return UnsafeRawBufferPointer(written)
    }

    /// Fills the data region's `range` with zeros, clipped to the mapping.
    func zeroRegion(_ range: Range<Int>) {
        precondition(!isReadOnly)
        let end = min(4 + range.upperBound, data.length)
        let start = 4 + range.lowerBound
        guard start < end else { return }
        (data.bytes.baseAddress! + start).initializeMemory(as: UInt8.self, repeating: 0, count: end - start)
        recorder?.record(.data(offset: start, bytes: [UInt8](repeating: 0, count: end - start)))
    }

    /// Stores `info` in the meta file: all 112 bytes, or only the CRC and size fields.
    ///
    /// The order matters to a process killed halfway: a whole struct is stored with its sequence
    /// last (see ``WriteBackJournal``), and an append's CRC is stored before its size (MMKV's order,
    /// which the interrupted-append repair relies on).
    func writeMeta(_ info: MetaInfo, _ write: MetaInfo.UpdateWrite) {
        precondition(!isReadOnly && meta.length >= MetaInfo.size, "meta file not sized for writing")
        switch write {
        case .wholeStruct:
            let bytes = info.serialized
            bytes.withUnsafeBytes { source in
                let sequence = MetaInfo.Offset.sequence
                meta.bytes.baseAddress!.copyMemory(from: source.baseAddress!, byteCount: sequence)
                (meta.bytes.baseAddress! + sequence + 4).copyMemory(
                    from: source.baseAddress! + sequence + 4, byteCount: MetaInfo.size - sequence - 4)
            }
            recorder?.record(.meta(offset: 0, bytes: Array(bytes[0..<MetaInfo.Offset.sequence])))
            recorder?.record(
                .meta(offset: MetaInfo.Offset.sequence + 4, bytes: Array(bytes[(MetaInfo.Offset.sequence + 4)...])))
            writeSequence(info.sequence)
            addCheckpoint(DurabilityCheckpoints.Checkpoint(info.stamp), in: meta.bytes)
        case .crcAndSizeOnly:
            writeCRCAndSize(crc: info.crcDigest, actualSize: info.actualSize)
        }
    }

    /// Stores the meta's CRC, then its size (two aligned 4-byte stores, in MMKV's order), as an append does.
    func writeCRCAndSize(crc: UInt32, actualSize: UInt32) {
        precondition(!isReadOnly && meta.length >= MetaInfo.size, "meta file not sized for writing")
        atomicMemoryFence(ordering: .releasing)
        meta.bytes.storeBytes(of: crc.littleEndian, toByteOffset: MetaInfo.Offset.crcDigest, as: UInt32.self)
        recorder?.record(.meta(offset: MetaInfo.Offset.crcDigest, bytes: littleEndianBytes(crc)))
        atomicMemoryFence(ordering: .releasing)
        meta.bytes.storeBytes(of: actualSize.littleEndian, toByteOffset: MetaInfo.Offset.actualSize, as: UInt32.self)
        recorder?.record(.meta(offset: MetaInfo.Offset.actualSize, bytes: littleEndianBytes(actualSize)))
        let mapped = meta.bytes
        let sequence = UInt32(
            littleEndian: mapped.loadUnaligned(fromByteOffset: MetaInfo.Offset.sequence, as: UInt32.self))
        addCheckpoint(
            DurabilityCheckpoints.Checkpoint(actualSize: actualSize, crcDigest: crc, sequence: sequence), in: mapped)
    }

    // MARK: Checkpoints

    /// Adds the state just stored in the meta to the ring of recent checkpoints (docs/FORMAT.md
    /// 3.5), where the meta has one, so that a recovery after a power loss can find it. `mapped`
    /// is the meta's mapping, which an append has in hand already.
    private func addCheckpoint(
        _ checkpoint: DurabilityCheckpoints.Checkpoint, in mapped: UnsafeMutableRawBufferPointer
    ) {
        DurabilityCheckpoints.add(checkpoint, to: mapped)
        if let recorder { recordCheckpoint(checkpoint, in: recorder) }
    }

    /// Records the slot and the counter ``addCheckpoint(_:)`` stored, for the crash tests.
    @inline(never)
    private func recordCheckpoint(_ checkpoint: DurabilityCheckpoints.Checkpoint, in recorder: WriteRecorder) {
        guard let slot = DurabilityCheckpoints.newestSlotOffset(in: metaFileBytes) else { return }
        let written = DurabilityCheckpoints.Offset.written
        recorder.record(.meta(offset: slot, bytes: DurabilityCheckpoints.serialized(checkpoint)))
        recorder.record(.meta(offset: written, bytes: Array(metaFileBytes[written..<(written + 4)])))
    }

    /// Whether the meta carries checkpoints.
    var hasCheckpoints: Bool { DurabilityCheckpoints.isPresent(in: metaFileBytes) }

    /// Records `checkpoint` as the durability point, where the meta has checkpoints. The data it
    /// describes must be on disk already; the meta is not flushed here.
    func markDurable(_ checkpoint: DurabilityCheckpoints.Checkpoint) {
        precondition(!isReadOnly, "a read-only store records no durability point")
        guard hasCheckpoints else { return }
        DurabilityCheckpoints.setDurable(checkpoint, in: meta.bytes)
        recorder?.record(
            .meta(offset: DurabilityCheckpoints.Offset.durable, bytes: DurabilityCheckpoints.serialized(checkpoint)))
    }

    /// Lays out the checkpoints in a meta that has none, with `durable` as the durability point.
    /// The data it describes must be on disk already; the meta is not flushed here.
    func initializeCheckpoints(durable: DurabilityCheckpoints.Checkpoint) {
        precondition(!isReadOnly && meta.length >= DurabilityCheckpoints.end, "meta file not sized for writing")
        DurabilityCheckpoints.initialize(meta.bytes, durable: durable)
        recorder?.record(
            .meta(
                offset: DurabilityCheckpoints.Offset.magic,
                bytes: Array(metaFileBytes[DurabilityCheckpoints.Offset.magic..<DurabilityCheckpoints.end])))
    }

    /// The state the meta in the mapping describes, as a checkpoint.
    var storedCheckpoint: DurabilityCheckpoints.Checkpoint { DurabilityCheckpoints.Checkpoint(metaStamp()) }

    /// Tells other processes that the data file was resized: increments `meta`'s sequence (a meta
    /// that keeps one, version 1 on) and stores it, so that they remap before reading on.
    ///
    /// A write-back journal still on disk is stale here (the caller holds the exclusive lock or
    /// owns the store, and has loaded or caught up, which finishes an interrupted write-back and
    /// deletes its journal), so it is deleted first: the increment could otherwise bring the
    /// sequence to that journal's marker (docs/FORMAT.md 8.4).
    func announceResize(_ meta: inout MetaInfo) {
        guard meta.version >= .sequence else { return }
        if Directory.fileExists(location.journalPath) { try? removeJournal() }
        meta.sequence &+= 1
        writeSequence(meta.sequence)
    }

    /// Stores only the meta's sequence (one aligned 4-byte store), after every earlier store.
    func writeSequence(_ sequence: UInt32) {
        precondition(!isReadOnly && meta.length >= MetaInfo.size, "meta file not sized for writing")
        atomicMemoryFence(ordering: .releasing)
        meta.bytes.storeBytes(of: sequence.littleEndian, toByteOffset: MetaInfo.Offset.sequence, as: UInt32.self)
        atomicMemoryFence(ordering: .releasing)
        recorder?.record(.meta(offset: MetaInfo.Offset.sequence, bytes: littleEndianBytes(sequence)))
    }

    private func littleEndianBytes(_ value: UInt32) -> [UInt8] {
        [
            UInt8(truncatingIfNeeded: value), UInt8(truncatingIfNeeded: value >> 8),
            UInt8(truncatingIfNeeded: value >> 16), UInt8(truncatingIfNeeded: value >> 24),
        ]
    }

    // MARK: Write-back journal

    /// Whether a write-back journal exists and what it holds: nil if there is none, `.some(nil)`
    /// if it is incomplete or damaged.
    func readJournal() throws(MappedKVError) -> WriteBackJournal?? {
        let file: FileDescriptor
        do { file = try FileDescriptor.open(location.journalPath, access: .readOnly) } catch {
            if error.errno == ENOENT { return nil }
            throw .system(SystemCallError(error))
        }
        defer { file.close() }
        let bytes = try systemCall { () throws(SystemError) in try file.read(count: try file.size(), at: 0) }
        return .some(WriteBackJournal(parsing: bytes))
    }

    /// Writes `journal` to its file, flushed to disk if `sync`.
    func writeJournal(_ journal: WriteBackJournal, sync: Bool) throws(MappedKVError) {
        do {
            let file = try FileDescriptor.open(location.journalPath, access: .writeTruncate)
            defer { file.close() }
            let bytes = journal.serialized
            try bytes.withRawBytes { (raw) throws(SystemError) in try file.write(raw, at: 0) }
            recorder?.record(.journal(bytes))
            if sync {
                try file.synchronize()
                recorder?.record(.sync(.journal))
                // A journal flushed but not yet named on disk would be lost with the power, and the
                // redo with it.
                try Directory.synchronize(location.fileDirectory)
                recorder?.record(.sync(.directory))
            }
        } catch {
            try? FileDescriptor.remove(location.journalPath)
            throw .system(SystemCallError(error))
        }
    }

    /// Deletes the journal file.
    func removeJournal() throws(MappedKVError) {
        try systemCall { () throws(SystemError) in try FileDescriptor.remove(location.journalPath) }
        recorder?.record(.journalRemoved)
    }

    /// Carries out the in-place part of a write-back recorded in `journal` (the marker sequence
    /// must already be stored): region, stale tail, size, then the whole meta with its sequence
    /// last. Running it again after a crash yields the same files.
    ///
    /// - Parameter staleEnd: the end of the bytes that may hold old records, zeroed past the new region.
    func applyWriteBack(_ journal: WriteBackJournal, staleEnd: Int, sync: Bool) throws(MappedKVError) {
        let target = Int(journal.fileSize)
        if target > data.length { try resizeData(to: target) }
        _ = journal.region.withUnsafeBytes { region in writeRegion(region, at: 0) }
        zeroRegion(journal.region.count..<max(journal.region.count, staleEnd))
        if target < data.length { try resizeData(to: target) }
        if sync { try synchronizeData() }
        writeMeta(journal.meta, .wholeStruct)
        if sync {
            // The region is on disk: the new state is the durability point.
            markDurable(DurabilityCheckpoints.Checkpoint(journal.meta.stamp))
            try synchronizeMeta()
        }
    }

    /// Flushes the data file's mapping to disk.
    func synchronizeData() throws(MappedKVError) {
        try injectedFlushFailure("msync")
        try systemCall { () throws(SystemError) in try data.synchronize() }
        recorder?.record(.sync(.data))
    }

    /// Flushes the meta file's mapping to disk.
    func synchronizeMeta() throws(MappedKVError) {
        try injectedFlushFailure("msync")
        try systemCall { () throws(SystemError) in try meta.synchronize() }
        recorder?.record(.sync(.meta))
    }

    /// Throws the flush failure a test set on this store's recorder, if any.
    private func injectedFlushFailure(_ operation: String) throws(MappedKVError) {
        guard let code = recorder?.flushFailure.load(ordering: .relaxed), code != 0 else { return }
        throw .system(SystemCallError(operation: operation, path: location.dataPath, errno: code))
    }

    /// Flushes the directory that holds the files, so that files created or removed in it keep
    /// or lose their names across a power loss.
    ///
    /// - Parameter withParent: also flush the directory above, whose entry names this one (for
    ///   files that may have been created in a directory made for them).
    func synchronizeDirectory(withParent: Bool = false) throws(MappedKVError) {
        try systemCall { () throws(SystemError) in
            try Directory.synchronize(location.fileDirectory)
            if withParent { try Directory.synchronize(location.fileDirectory + "/..") }
        }
        recorder?.record(.sync(.directory))
    }
}
