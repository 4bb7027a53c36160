import Glibc
import MappedKVCrypto
import MappedKVFormat
import MappedKVIO

/// Consistent copies of a store's files, and putting a copy back (docs/FORMAT.md 6.5).
///
/// The invariant: a backup is the files as they were at one instant between two writes (copied
/// under the shared lock, or this process's instance held), and a restore replaces the live
/// store in one full write-back through the journal, with the sequence incremented, so every
/// process that has it open reloads the restored state and a crash midway is finished by the next
/// load, never left half-restored.
enum StoreBackup {
    /// A store's files read at one instant: the whole data and meta files and any journal.
    struct Image {
        var dataFile: [UInt8]
        var metaFile: [UInt8]
        var journal: [UInt8]?
    }

    /// What a restore writes: a verified region as stored, with its meta.
    struct Replacement {
        /// The normalized meta of the backup, with the size its CRC covers.
        var meta: MetaInfo
        /// The region as stored (encrypted for an encrypted store).
        var region: [UInt8]
        /// The backup's data file size.
        var dataFileSize: Int
    }

    /// Reads the files of `location`; call it while the store is steady.
    static func read(_ location: StoreLocation) throws(MappedKVError) -> Image {
        guard Directory.fileExists(location.dataPath) else { throw .storeNotFound(path: location.dataPath) }
        return Image(
            dataFile: try readFile(location.dataPath) ?? [], metaFile: try readFile(location.metaPath) ?? [],
            journal: try readFile(location.journalPath))
    }

    /// Writes `image` as the files of `destination`, each to a temporary name first and renamed
    /// into place (the data file before the meta file); a journal the image lacks is deleted.
    static func write(_ image: Image, to destination: StoreLocation) throws(MappedKVError) {
        try systemCall { () throws(SystemError) in
            try Directory.create(destination.fileDirectory)
            if image.journal == nil { try FileDescriptor.remove(destination.journalPath) }
            try writeReplacing(destination.dataPath, image.dataFile)
            try writeReplacing(destination.metaPath, image.metaFile)
            if let journal = image.journal { try writeReplacing(destination.journalPath, journal) }
        }
    }

    /// Checks that `image` is a store a restore may write: no unfinished journal, sizes in range
    /// and the CRC matching; with `key`, also that every record decodes with it. Without a key a
    /// region that does not decode as plain text is taken as encrypted and checked by CRC only.
    static func replacement(
        from image: Image, id: String, key: CryptKey?
    ) throws(MappedKVError) -> Replacement {
        guard image.journal == nil else {
            throw .backupFailed(
                id: id,
                reason: "the backup holds an interrupted write-back (\(id).writeback); open the backup "
                    + "read-write once to finish it, then restore")
        }
        let assessment = try cryptoCall { () throws(CryptoFailure) in
            try image.dataFile.withRawBytes { (data) throws(CryptoFailure) in
                try image.metaFile.withRawBytes { (meta) throws(CryptoFailure) in
                    try LoadAssessment.assess(dataFile: data, metaFile: meta, key: key)
                }
            }
        }
        var meta: MetaInfo
        let size: Int
        switch assessment {
        case .sound(let region):
            meta = region.meta
            size = Int(region.meta.actualSize)
            if meta.version < .randomIV, let key, size > 0 {
                // The region is encrypted from the key's legacy IV; the restored meta records it.
                meta.iv = InitializationVector(key.legacyIV) ?? .zero
            }
        case .crashLoss(let finding):
            throw .backupFailed(
                id: id,
                reason: "the backup's files lost writes to a crash (\(finding.report(storeID: id, isReadOnly: true))); "
                    + "open the backup read-write once to keep its durable state, then restore")
        case .damaged(let finding):
            guard key == nil, finding.kind == .undecodable || finding.kind == .wrongKeySuspected else {
                throw .backupFailed(id: id, reason: "the backup is damaged: \(finding.reason)")
            }
            meta = ((try? MetaInfo(parsing: image.metaFile)) ?? MetaInfo()).normalized
            guard meta.version >= .randomIV else {
                throw .backupFailed(
                    id: id, reason: "the backup does not decode as a plain store and predates random IVs; pass its key")
            }
            size = image.dataFile.withUnsafeBytes { data in
                RegionValidator.actualSize(meta: meta, header: RegionValidator.header(of: data))
            }
        }
        let region = size == 0 ? [] : Array(image.dataFile[4..<(4 + size)])
        return Replacement(meta: meta, region: region, dataFileSize: image.dataFile.count)
    }

    /// Replaces the store in `files` (held under the exclusive lock) by `replacement`: a full
    /// write-back through the journal (docs/FORMAT.md 8.3) whose meta is the backup's with the
    /// live sequence incremented, every byte past the new region zeroed.
    ///
    /// A failure before the marker sequence is stored changes nothing; after it, the next load in
    /// any process finishes the restore from the journal.
    static func commit(_ replacement: Replacement, into files: StoreFiles) throws(MappedKVError) {
        let page = PageSize.current
        try files.ensureMetaSize(pageSize: page)
        let base = files.metaStamp()
        var meta = replacement.meta
        meta.sequence = base.sequence
        let stored = UInt32(replacement.region.count)
        _ = meta.update(actualSize: stored, crc: meta.crcDigest, increasesSequence: true)
        let fileSize = max(
            PageSize.roundUp(max(replacement.dataFileSize, 4 + replacement.region.count), pageSize: page), page)
        let journal = WriteBackJournal(base: base, fileSize: UInt64(fileSize), meta: meta, region: replacement.region)
        try files.writeJournal(journal, sync: true)
        do {
            if fileSize > files.dataFileSize { try files.resizeData(to: fileSize) }
        } catch {
            try? files.removeJournal()
            throw error
        }
        let staleEnd = max(files.dataFileSize, fileSize) - 4
        files.writeSequence(journal.markerSequence)
        try files.synchronizeMeta()
        try files.applyWriteBack(journal, staleEnd: staleEnd, sync: true)
        try? files.removeJournal()  // if this fails, the next load ignores it: the sequence moved on
    }

    private static func readFile(_ path: String) throws(MappedKVError) -> [UInt8]? {
        do {
            let file = try FileDescriptor.open(path, access: .readOnly)
            defer { file.close() }
            return try file.read(count: try file.size(), at: 0)
        } catch {
            if error.errno == ENOENT { return nil }
            throw .system(SystemCallError(error))
        }
    }

    private static func writeReplacing(_ path: String, _ bytes: [UInt8]) throws(SystemError) {
        let temporary = path + ".backup-tmp"
        let file = try FileDescriptor.open(temporary, access: .writeTruncate)
        do {
            try bytes.withRawBytes { (raw) throws(SystemError) in try file.write(raw, at: 0) }
            try file.synchronize()
            file.close()
        } catch {
            file.close()
            try? FileDescriptor.remove(temporary)
            throw error
        }
        try Directory.rename(temporary, to: path)
    }
}
