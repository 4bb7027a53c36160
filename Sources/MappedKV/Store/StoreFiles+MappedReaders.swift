import MappedKVFormat
import MappedKVIO

// What reading through the mappings (docs/FORMAT.md 12.5) needs from the files: the lock that
// keeps the data file from shrinking under a reader, and what an index file records to tell
// later whether the files were written outside the protocol.
extension StoreFiles {
    /// When the data file last changed (``FileDescriptor/modificationTime()``) and the CRC of
    /// the meta's struct (its first 112 bytes), or nil if the data file cannot be examined or the
    /// meta is shorter than the struct: what an index file records to tell later whether the
    /// files were written outside the protocol (docs/FORMAT.md 12.5).
    func unchangedSince() -> (dataModified: UInt64, metaStructCRC: UInt32)? {
        guard let modified = try? dataFile.modificationTime(), metaFileBytes.count >= MetaInfo.size else { return nil }
        let structBytes = UnsafeRawBufferPointer(rebasing: metaFileBytes[0..<MetaInfo.size])
        return (modified, CRC32.update(0, structBytes))
    }

    /// Takes the mapped-reader lock (``StoreLock/mappedReaderByte``) shared; false if a shrink
    /// holds it or it cannot be taken.
    func holdMappedReaderLock() -> Bool {
        (try? ByteRangeLock.tryLock(metaFile, offset: StoreLock.mappedReaderByte, length: 1, kind: .shared)) ?? false
    }

    /// Releases the mapped-reader lock.
    func releaseMappedReaderLock() {
        try? ByteRangeLock.unlock(metaFile, offset: StoreLock.mappedReaderByte, length: 1)
    }

    /// Whether another process reads through its mapping of the data file.
    func mappedReadersPresent() -> Bool {
        (try? ByteRangeLock.isLockedByOthers(metaFile, offset: StoreLock.mappedReaderByte, length: 1)) ?? true
    }
}
