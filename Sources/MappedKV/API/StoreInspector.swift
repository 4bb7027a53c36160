import MappedKVCrypto
import MappedKVFormat
import MappedKVIO

/// Reads a store's files without opening the store and reports on their state, damage included.
public enum StoreInspector {
    /// Inspects the store `id` under `directory`, decrypting with `cryptKey` if given.
    public static func inspect(
        id: String, directory: String, cryptKey: CryptKey? = nil
    ) throws(MappedKVError) -> InspectionReport {
        let location = try StoreLocation(id: id, directory: directory)
        guard Directory.fileExists(location.dataPath) || Directory.fileExists(location.metaPath) else {
            throw .storeNotFound(path: location.dataPath)
        }
        let data = try readWholeFile(location.dataPath)
        let meta = try readWholeFile(location.metaPath)
        var report = try inspect(location: location, dataFile: data, metaFile: meta, cryptKey: cryptKey)
        report.journalPresent = Directory.fileExists(location.journalPath)
        return report
    }

    /// The write-back journal that a writer killed during a full write-back left behind, or nil if
    /// there is none.
    ///
    /// It is looked for under the store's shared inter-process lock (docs/FORMAT.md 6.1), so the
    /// journal of a write-back in progress in a live process, which removes it before releasing
    /// its exclusive lock, is never mistaken for an interrupted one. Call it from a process that
    /// does not have the store open: `flock` locks of one process on two descriptors of a file
    /// block each other.
    public static func interruptedWriteBackJournal(id: String, directory: String) throws(MappedKVError) -> [UInt8]? {
        let location = try StoreLocation(id: id, directory: directory)
        guard Directory.fileExists(location.metaPath) else { throw .storeNotFound(path: location.dataPath) }
        let meta = try systemCall { () throws(SystemError) in
            try FileDescriptor.open(location.metaPath, access: .readOnly)
        }
        defer { meta.close() }  // which also releases the lock
        _ = try systemCall { () throws(SystemError) in try FileLock(meta).lock(.shared) }
        let sharedMemoryLock = try StoreLock.sharedMemoryLockIfPresent(location, kind: .shared)
        defer { sharedMemoryLock?.releaseAll() }
        return try readWholeFile(location.journalPath)
    }

    private static func readWholeFile(_ path: String) throws(MappedKVError) -> [UInt8]? {
        guard Directory.fileExists(path) else { return nil }
        return try systemCall { () throws(SystemError) in
            let file = try FileDescriptor.open(path, access: .readOnly)
            defer { file.close() }
            return try file.read(count: try file.size(), at: 0)
        }
    }

    /// Inspects the given file contents; nil stands for a missing file.
    ///
    /// Damage is reported in the result, never thrown.
    /// - Throws: ``MappedKVError/crypto(_:)`` if libcrypto fails while decrypting with `cryptKey`.
    public static func inspect(
        location: StoreLocation, dataFile: [UInt8]?, metaFile: [UInt8]?, cryptKey: CryptKey? = nil
    ) throws(MappedKVError) -> InspectionReport {
        let data = dataFile ?? []
        let metaBytes = metaFile ?? []
        let storedMeta: MetaInfo? = metaBytes.isEmpty ? MetaInfo() : (try? MetaInfo(parsing: metaBytes))
        var report = InspectionReport(
            location: location, dataFileSize: data.count, metaFileSize: metaBytes.count,
            storedMeta: storedMeta.map(StoreMeta.init), header: 0, actualSize: 0, lengthIsValid: false,
            computedCRC: nil, lastConfirmedIsValid: false, holder: [], decode: nil, liveKeyCount: 0,
            deletionRecordCount: 0, supersededRecordCount: 0, liveBytes: 0, problem: nil)
        if dataFile == nil { report.problem = "data file is missing" }
        if metaFile == nil { report.problem = report.problem ?? "meta file is missing" }
        if dataFile != nil && metaFile != nil {
            // What a load would do, from the same bytes (a short meta file included).
            let assessment = try cryptoCall { () throws(CryptoFailure) in
                try data.withRawBytes { (dataBytes) throws(CryptoFailure) in
                    try metaBytes.withRawBytes { (metaRaw) throws(CryptoFailure) in
                        try LoadAssessment.assess(dataFile: dataBytes, metaFile: metaRaw, key: cryptKey)
                    }
                }
            }
            report.verdict = verdict(assessment, id: location.id, key: cryptKey)
        }
        guard let storedMeta else {
            report.problem =
                report.problem
                ?? "meta file is \(metaBytes.count) bytes, shorter than the \(MetaInfo.size)-byte meta struct"
            return report
        }
        let meta = storedMeta.normalized
        try data.withRawBytes { (bytes) throws(MappedKVError) in
            if RegionValidator.isBlankMetaOverData(meta: meta, dataFile: bytes) {
                report.problem = report.problem ?? CorruptionReason.metaFileMissing.description
            }
            report.header = RegionValidator.header(of: bytes)
            report.actualSize = RegionValidator.actualSize(meta: meta, header: report.header)
            let size = report.actualSize
            report.lengthIsValid = (data.isEmpty && size == 0) || (size < data.count && size + 4 <= data.count)
            let lastSize = Int(meta.lastConfirmedActualSize)
            if lastSize + 4 <= data.count {
                let crc = CRC32.update(0, UnsafeRawBufferPointer(rebasing: bytes[4..<(4 + lastSize)]))
                report.lastConfirmedIsValid = crc == meta.lastConfirmedCRC
            }
            guard report.lengthIsValid else {
                report.problem =
                    report.problem
                    ?? CorruptionReason.lengthOutOfRange(actualSize: size, fileSize: data.count).description
                return
            }
            let stored =
                data.isEmpty
                ? UnsafeRawBufferPointer(start: nil, count: 0)
                : UnsafeRawBufferPointer(rebasing: bytes[4..<(4 + size)])
            report.computedCRC = CRC32.update(0, stored)
            var plaintext = [UInt8](stored)
            if let cryptKey {
                try cryptoCall { () throws(CryptoFailure) in try meta.regionStream(for: cryptKey).decrypt(&plaintext) }
            }
            if report.computedCRC != meta.crcDigest {
                report.problem =
                    report.problem
                    ?? CorruptionReason.crcMismatch(stored: meta.crcDigest, computed: report.computedCRC ?? 0)
                    .description
            }
            plaintext.withUnsafeBytes { region in decodeStatistics(region, checksKeys: cryptKey != nil, into: &report) }
        }
        if dataFile != nil && metaFile != nil {
            switch report.verdict {
            case .sound: break
            case .losslessRepair(let what): report.problem = report.problem ?? "repairable without loss: \(what)"
            case .damaged(let event): report.problem = report.problem ?? "\(event.kind): \(event.reason)"
            case .crashLoss(let loss): report.problem = report.problem ?? "writes lost to a crash: \(loss)"
            // What the plain reading found is damage only if the store is plain, which nothing
            // here can tell: the missing key is the problem reported.
            case .missingCryptKey: report.problem = report.verdict.description
            }
        }
        return report
    }

    private static func verdict(_ assessment: LoadAssessment, id: String, key: CryptKey?) -> LoadVerdict {
        switch assessment {
        case .sound(let region):
            switch region.repair {
            case nil: return .sound
            case .headerSize:
                return .losslessRepair("the header holds the size the CRC covers (\(region.meta.actualSize) bytes)")
            case .checkpoint:
                return .losslessRepair(
                    "the meta's CRC is wrong, but a recorded checkpoint vouches for all \(region.meta.actualSize) bytes"
                )
            case .interruptedAppend:
                return .losslessRepair(
                    "an append was interrupted before its size was stored; the CRC covers \(region.meta.actualSize) bytes"
                )
            }
        case .crashLoss(let finding): return .crashLoss(finding.report(storeID: id, isReadOnly: false))
        case .damaged(let finding):
            let event = finding.event(storeID: id, isReadOnly: false)
            // The open's rule, so that the report says what an open without a key would throw.
            if MissingCryptKey.applies(to: finding, key: key, treatsStoreAsPlain: false) {
                return .missingCryptKey(event)
            }
            return .damaged(event)
        }
    }

    /// Walks the records of a plaintext region once and fills in the decode statistics. With
    /// `checksKeys` (a decrypted region), an implausible holder or a non-UTF-8 key counts as undecodable.
    private static func decodeStatistics(
        _ region: UnsafeRawBufferPointer, checksKeys: Bool, into report: inout InspectionReport
    ) {
        var live: [[UInt8]: Int] = [:]
        var deletions = 0
        var records = 0
        var hasNonUTF8Key = false
        let summary = RecordDecoder.decode(region, skipsHolder: true) { record in
            records += 1
            let keyBytes = UnsafeRawBufferPointer(rebasing: region[record.keyRange])
            if checksKeys && !hasNonUTF8Key && !UTF8Check.isValid(keyBytes) { hasNonUTF8Key = true }
            let key = Array(keyBytes)
            if record.isDeletion {
                deletions += 1
                live.removeValue(forKey: key)
            } else {
                live[key] = record.end - record.start
            }
        }
        report.holder = Array(region.prefix(ItemSizeHolder.length(in: region) ?? 0))
        report.decode = RegionDecodeSummary(summary)
        report.liveKeyCount = live.count
        report.deletionRecordCount = deletions
        report.supersededRecordCount = records - deletions - live.count
        report.liveBytes = live.values.reduce(0, +)
        var error = summary.error
        if error == nil && checksKeys {
            error = RegionValidator.implausibleHolder(in: region) ?? (hasNonUTF8Key ? .invalidUTF8 : nil)
        }
        if let error {
            report.problem = report.problem ?? CorruptionReason.undecodable(error).description
        }
    }
}
