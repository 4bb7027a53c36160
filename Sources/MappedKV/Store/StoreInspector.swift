import MappedKVCrypto
import MappedKVFormat
import MappedKVIO

/// What ``StoreInspector`` found in a store's files. Reading it changes nothing on disk.
public struct InspectionReport: Sendable, Equatable {
    /// The store's file paths.
    public var location: StoreLocation
    /// The data file's size in bytes.
    public var dataFileSize: Int
    /// The meta file's size in bytes.
    public var metaFileSize: Int
    /// The meta struct as stored, or nil if the meta file is shorter than 112 bytes.
    public var storedMeta: MetaInfo?
    /// The data file's 4-byte header.
    public var header: UInt32
    /// The used size MMKV would load (from the meta from version 3, else the header).
    public var actualSize: Int
    /// Whether the used size fits in the data file.
    public var lengthIsValid: Bool
    /// The CRC of the data region, when the size is valid.
    public var computedCRC: UInt32?
    /// Whether the last-confirmed state (size and CRC at the last full write-back) still checks out.
    public var lastConfirmedIsValid: Bool
    /// The item-size holder's bytes.
    public var holder: [UInt8]
    /// The decoder's pass over the region, when the size is valid.
    public var decode: DecodeSummary?
    /// Live keys after the decode.
    public var liveKeyCount: Int
    /// Deletion records in the region.
    public var deletionRecordCount: Int
    /// Records superseded by a later record of the same key, or by a deletion.
    public var supersededRecordCount: Int
    /// Bytes of the live records (the holder excluded).
    public var liveBytes: Int
    /// The first problem found, or nil if the store is sound.
    public var problem: String?
    /// What opening the store would do: load it as it is, repair it losslessly, or report damage.
    public var verdict: LoadVerdict = .sound
    /// Whether a write-back journal (`<data file>.writeback`) is present.
    public var journalPresent = false

    /// Whether sizes, CRC and decoding all check out.
    public var isSound: Bool { problem == nil }
    /// Whether the CRC of the region matches the meta.
    public var crcIsValid: Bool { computedCRC != nil && computedCRC == storedMeta?.normalized.crcDigest }
    /// Data file bytes per live byte (1 would be a file holding only live records).
    public var spaceAmplification: Double { Double(dataFileSize) / Double(max(liveBytes, 1)) }
}

/// What opening a store would do with its files, as ``StoreInspector`` predicts it.
public enum LoadVerdict: Sendable, Equatable, CustomStringConvertible {
    /// The files load as they are.
    case sound
    /// The files load after a repair that loses nothing (an append interrupted between its two
    /// meta stores, or the size held in the header), written by the next read-write open.
    case losslessRepair(String)
    /// The files are damaged: what the recovery handler would be told.
    case damaged(DamageEvent)

    public var description: String {
        switch self {
        case .sound: "sound"
        case .losslessRepair(let what): "repairable without loss: \(what)"
        case .damaged(let event): "damaged: \(event.reason)"
        }
    }
}

/// Reads a store's files without opening the store and reports on their state, damage included.
public enum StoreInspector {
    /// Inspects the store `id` under `directory`, decrypting with `cryptKey` if given.
    public static func inspect(
        id: String, directory: String, cryptKey: CryptKey? = nil
    ) throws(MappedKVError) -> InspectionReport {
        let location = try StoreLocation(id: id, directory: directory)
        guard Directory.fileExists(location.dataPath) || Directory.fileExists(location.metaPath) else {
            throw .storeNotFound(location.dataPath)
        }
        let data = try readWholeFile(location.dataPath)
        let meta = try readWholeFile(location.metaPath)
        var report = inspect(location: location, dataFile: data, metaFile: meta, cryptKey: cryptKey)
        report.journalPresent = Directory.fileExists(location.journalPath)
        return report
    }

    private static func readWholeFile(_ path: String) throws(MappedKVError) -> [UInt8]? {
        guard Directory.fileExists(path) else { return nil }
        do {
            let file = try FileDescriptor.open(path, access: .readOnly)
            defer { file.close() }
            return try file.read(count: try file.size(), at: 0)
        } catch { throw .system(error) }
    }

    /// Inspects the given file contents; nil stands for a missing file.
    public static func inspect(
        location: StoreLocation, dataFile: [UInt8]?, metaFile: [UInt8]?, cryptKey: CryptKey? = nil
    ) -> InspectionReport {
        let data = dataFile ?? []
        let metaBytes = metaFile ?? []
        let storedMeta: MetaInfo? = metaBytes.isEmpty ? MetaInfo() : (try? MetaInfo(parsing: metaBytes))
        var report = InspectionReport(
            location: location, dataFileSize: data.count, metaFileSize: metaBytes.count, storedMeta: storedMeta,
            header: 0, actualSize: 0, lengthIsValid: false, computedCRC: nil, lastConfirmedIsValid: false,
            holder: [], decode: nil, liveKeyCount: 0, deletionRecordCount: 0, supersededRecordCount: 0,
            liveBytes: 0, problem: nil)
        if dataFile == nil { report.problem = "data file is missing" }
        if metaFile == nil { report.problem = report.problem ?? "meta file is missing" }
        if dataFile != nil && metaFile != nil {
            // What a load would do, from the same bytes (a short meta file included).
            report.verdict = data.withUnsafeBytes { dataBytes in
                metaBytes.withUnsafeBytes { metaRaw in
                    verdict(
                        LoadAssessment.assess(dataFile: dataBytes, metaFile: metaRaw, key: cryptKey), id: location.id)
                }
            }
        }
        guard let storedMeta else {
            report.problem =
                report.problem
                ?? "meta file is \(metaBytes.count) bytes, shorter than the \(MetaInfo.size)-byte meta struct"
            return report
        }
        let meta = storedMeta.normalized
        data.withUnsafeBytes { bytes in
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
                let iv = meta.version >= .randomIV ? meta.iv.bytes : cryptKey.legacyIV
                plaintext.withUnsafeMutableBytes { CFBStream(key: cryptKey, iv: iv).decrypt($0) }
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
            }
        }
        return report
    }

    private static func verdict(_ assessment: LoadAssessment, id: String) -> LoadVerdict {
        switch assessment {
        case .sound(let region):
            switch region.repair {
            case nil: return .sound
            case .headerSize:
                return .losslessRepair("the header holds the size the CRC covers (\(region.meta.actualSize) bytes)")
            case .interruptedAppend:
                return .losslessRepair(
                    "an append was interrupted before its size was stored; the CRC covers \(region.meta.actualSize) bytes"
                )
            }
        case .damaged(let finding): return .damaged(finding.event(storeID: id, isReadOnly: false))
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
        if !region.isEmpty {
            var cursor = ByteCursor(region)
            if (try? cursor.readVarint64()) != nil { report.holder = Array(region[0..<cursor.position]) }
        }
        report.decode = summary
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
