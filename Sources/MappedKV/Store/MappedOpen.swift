import Logging
import MappedKVFormat
import MappedKVIO

/// An open, or a reload, that reads a store through its mappings (docs/FORMAT.md 12.5): the
/// index file's buckets and the data file's region where they lie, with no private copy of
/// either. What a process then holds of its own is the records written after the index file's
/// state (``StoreCore/LoadedRegion/index``, used as an overlay) and, for an encrypted store, the plaintext of
/// the pages it has read (``DecryptedPages``, 12.6).
///
/// Only where no process can rewrite the region in place without first moving the sequence: a
/// single-process writer (no other process can have the store open) and multi-process stores
/// with the shared-memory lock (MMKV cannot take it). An MMKV process rewrites the region before
/// it moves the sequence, so a store shared with the `flock` keeps the private copy.
struct MappedOpen {
    var file: MappedIndexFile
    var meta: MetaInfo
    var dataHeader: UInt32
    var stamp: MetaStamp
    /// The records past the file's state: each key's latest, deletions kept.
    var overlay: KeyIndex
    var liveCount: Int
    var recordCount: Int
    /// An encrypted store's plaintext pages; nil for a plain store.
    var pages: DecryptedPages?

    var expiryEnabled: Bool { meta.version >= .flag && meta.flags.contains(.keyExpiry) }

    /// Whether a store opened with `configuration` over `files`, `encrypted` or not, may read
    /// through its mappings.
    static func isEligible(_ configuration: Configuration, files: StoreFiles, encrypted: Bool) -> Bool {
        guard configuration.usesIndexFile, !encrypted || configuration.decryptsPagesOnRead,
            !Directory.fileExists(files.location.journalPath)
        else {
            return false
        }
        if configuration.isMultiProcess {
            guard case .sharedMemory = files.lock else { return false }
            return true
        }
        return !configuration.isReadOnly
    }

    /// The mapped state of `files`, encrypted with `key` if given, from the index file at `path`,
    /// or nil if the file does not describe the store as it is now, or cannot be trusted without
    /// the checks a decode makes.
    static func attempt(_ files: StoreFiles, key: CryptKey?, path: String, logger: Logger) -> MappedOpen? {
        guard let file = MappedIndexFile.map(path, key: key, logger: logger) else { return nil }
        let header = file.header
        let meta = LoadAssessment.parseMeta(files.metaFileBytes).normalized
        let stamp = files.metaStamp()
        let dataFile = files.dataFileBytes
        let dataHeader = RegionValidator.header(of: dataFile)
        let expiryEnabled = meta.version >= .flag && meta.flags.contains(.keyExpiry)
        let indexedSize = Int(header.stamp.actualSize)
        let size = Int(stamp.actualSize)
        guard files.identity.device == header.dataDevice, files.identity.inode == header.dataInode,
            header.flags.contains(.keyExpiry) == expiryEnabled, header.repairedKeyCount == 0,
            header.keyCount <= header.bucketCount / 4 * 3,
            meta.holdsActualSize, RegionValidator.actualSize(meta: meta, header: dataHeader) == size,
            header.stamp.sequence == stamp.sequence, size >= indexedSize, 4 + size <= dataFile.count,
            size > indexedSize || (header.stamp == stamp && header.dataHeader == dataHeader)
        else { return nil }
        let region = UnsafeRawBufferPointer(rebasing: dataFile[4..<(4 + size)])
        if size > indexedSize {
            let tail = UnsafeRawBufferPointer(rebasing: region[indexedSize..<size])
            guard CRC32.update(header.stamp.crcDigest, tail) == stamp.crcDigest else { return nil }
        }
        // A file written in this boot describes bytes verified in this boot, which a crash of a
        // process cannot change behind the meta's stamp. The region's CRC is checked as a strict
        // load checks it after a reboot (a power failure may have lost writes the file saw), and
        // when the log is in the very state the file describes but the files changed since it
        // was written (by hand, or by a tool that does not keep the protocol).
        let sameBoot = BootIdentity.current != nil && BootIdentity.current == header.bootID
        let untouched =
            size > indexedSize
            || files.unchangedSince().map {
                $0.dataModified == header.dataModified && $0.metaStructCRC == header.metaStructCRC
            } ?? false
        logger.debug(
            "reading through the mappings",
            metadata: [
                "path": "\(path)", "checksRegion": "\(!sameBoot || !untouched)", "tail": "\(size - indexedSize)",
            ])
        if !sameBoot || !untouched {
            guard CRC32.update(0, UnsafeRawBufferPointer(rebasing: region[0..<indexedSize])) == header.stamp.crcDigest
            else { return nil }
        }
        var pages: DecryptedPages?
        if let key {
            guard let made = DecryptedPages(key: key, iv: meta.regionIV(for: key), capacity: dataFile.count - 4) else {
                return nil
            }
            pages = made
        }
        // The buckets are checked a page at a time as lookups reach them (MappedIndexFile).
        var open = MappedOpen(
            file: file, meta: meta, dataHeader: dataHeader, stamp: stamp, overlay: KeyIndex(),
            liveCount: Int(header.keyCount), recordCount: Int(header.recordCount), pages: pages)
        guard open.fileRecords(in: MappedPlaintext(region: region, pages: pages), from: indexedSize) != nil else {
            return nil
        }
        return open
    }

    /// Files the records of `plaintext` from `start` in the overlay, keeping deletions, and
    /// counts the live keys; returns how many records, or nil if they do not decode or a key is
    /// not UTF-8 (which only a private index files, under its repair). The records after `start`
    /// are prepared (decrypted) first: the overlay's slots point there.
    mutating func fileRecords(in plaintext: MappedPlaintext, from start: Int) -> Int? {
        let region = plaintext.bytes
        guard start < region.count else { return 0 }
        guard plaintext.prepare(start..<region.count) else { return nil }
        var valid = true
        var filed = 0
        let base = file
        var overlay = self.overlay
        var live = liveCount
        let summary = RecordDecoder.decode(region, from: start, skipsHolder: start == 0) { record in
            guard valid else { return }
            let key = UnsafeRawBufferPointer(rebasing: region[record.keyRange])
            guard UTF8Check.isValid(key) else {
                valid = false
                return
            }
            let hash = overlay.hash(key)
            let wasLive: Bool
            if let earlier = overlay.slot(for: key, hash: hash, in: region) {
                wasLive = earlier.valueLength > 0
            } else {
                switch base.slot(for: key, in: plaintext) {
                case .found: wasLive = true
                case .absent: wasLive = false
                case .damaged:
                    valid = false
                    return
                }
            }
            _ = overlay.update(ValueSlot(record), key: key, hash: hash, in: region)
            live += (record.isDeletion ? 0 : 1) - (wasLive ? 1 : 0)
            filed += 1
        }
        guard valid, summary.error == nil else { return nil }
        self.overlay = overlay
        liveCount = live
        recordCount += filed
        return filed
    }
}
