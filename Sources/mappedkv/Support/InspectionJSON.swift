import Foundation
import Glibc
import MappedKV
import MappedKVFormat

/// What `info` and `verify` both say about an inspection: the exit status, the space ratio, and
/// the JSON shapes of their `--json` options. Both derive the store's state from
/// ``InspectionReport/isSound`` and its verdict, so they never disagree about damage.
enum InspectionSummary {
    /// 0 for a sound store, 5 when the damage points to a wrong key, 7 when a store that looks
    /// encrypted was read without a key, 4 for other damage.
    static func exitStatus(_ report: InspectionReport) -> ExitStatus {
        if report.isSound { return .ok }
        if case .missingCryptKey = report.verdict { return .missingKey }
        if case .damaged(let event) = report.verdict, event.kind == .wrongKeySuspected { return .wrongKey }
        return .damaged
    }

    /// `sound`, `repairable` (without loss), `missingKey` (it looks encrypted and no key was
    /// given) or `damaged`.
    static func state(_ report: InspectionReport) -> String {
        if report.isSound { return "sound" }
        if case .losslessRepair = report.verdict { return "repairable" }
        if case .missingCryptKey = report.verdict { return "missingKey" }
        return "damaged"
    }

    /// Data file bytes per live byte, or nil while the file is at its one-page minimum, where
    /// the ratio says nothing about wasted space.
    static func spaceAmplification(_ report: InspectionReport) -> Double? {
        report.dataFileSize <= sysconf(Int32(_SC_PAGESIZE)) ? nil : report.spaceAmplification
    }

    /// The ratio as `verify` prints it.
    static func spaceAmplificationText(_ report: InspectionReport) -> String {
        guard let ratio = spaceAmplification(report) else { return "- (the file is at its one-page minimum size)" }
        return String(format: "%.2fx", ratio)
    }

    static func hex32(_ value: UInt32) -> String {
        let digits = String(value, radix: 16)
        return "0x" + String(repeating: "0", count: max(0, 8 - digits.count)) + digits
    }

    /// `info --json`: the meta fields (null when unreadable), the sizes and checks, the holder,
    /// the key count and the state.
    static func infoJSON(_ report: InspectionReport) -> [String: Any] {
        var meta: Any = NSNull()
        if let stored = report.storedMeta {
            meta =
                [
                    "version": Int(stored.version), "sequence": Int(stored.sequence),
                    "crc": hex32(stored.crcDigest), "lastConfirmedActualSize": Int(stored.lastConfirmedActualSize),
                    "lastConfirmedCRC": hex32(stored.lastConfirmedCRC), "flags": Int(stored.flags),
                    "iv": Hex.encode(stored.iv),
                ] as [String: Any]
        }
        return [
            "id": report.location.id, "dataPath": report.location.dataPath, "metaPath": report.location.metaPath,
            "meta": meta, "actualSize": report.actualSize, "fileSize": report.dataFileSize,
            "metaFileSize": report.metaFileSize, "header": Int(report.header), "lengthOK": report.lengthIsValid,
            "computedCRC": report.computedCRC.map(hex32) ?? NSNull(), "crcOK": report.crcIsValid,
            "holder": Hex.encode(report.holder), "keys": report.liveKeyCount, "status": state(report),
            "problem": report.problem ?? NSNull(),
        ]
    }

    /// `verify --json`: the checks, the records, the live data, the state and what a recovery
    /// would keep and drop (null unless damaged).
    static func verifyJSON(_ report: InspectionReport) -> [String: Any] {
        var object: [String: Any] = [
            "id": report.location.id, "dataPath": report.location.dataPath,
            "files": ["data": report.dataFileSize, "meta": report.metaFileSize],
            "actualSize": report.actualSize, "lengthOK": report.lengthIsValid,
            "crc": [
                "stored": report.storedMeta.map { hex32($0.crcDigest) } ?? NSNull(),
                "computed": report.computedCRC.map(hex32) ?? NSNull(), "match": report.crcIsValid,
            ] as [String: Any],
            "lastConfirmedOK": report.lastConfirmedIsValid,
            "live": [
                "keys": report.liveKeyCount, "bytes": report.liveBytes,
                "spaceAmplification": spaceAmplification(report) ?? NSNull(),
            ] as [String: Any],
            "journal": report.journalPresent, "status": state(report), "problem": report.problem ?? NSNull(),
            "records": NSNull(), "recovery": NSNull(),
        ]
        if let decode = report.decode {
            object["records"] =
                [
                    "decodable": decode.recordCount, "deletions": report.deletionRecordCount,
                    "superseded": report.supersededRecordCount,
                    "stoppedAt": decode.error == nil ? NSNull() : decode.validEnd as Any,
                    "error": decode.error.map { "\($0)" } ?? NSNull(),
                ] as [String: Any]
        }
        if case .damaged(let event) = report.verdict {
            let proposal = event.proposal
            object["recovery"] =
                [
                    "kind": event.kind.rawValue, "basis": proposal.basis.rawValue, "lossless": proposal.isLossless,
                    "kept": ["keys": proposal.keptKeys, "records": proposal.keptRecords, "bytes": proposal.keptBytes],
                    "dropped": [
                        "bytes": proposal.droppedBytes, "records": proposal.droppedRecords,
                        "keys": proposal.droppedKeys,
                    ] as [String: Any],
                ] as [String: Any]
        }
        return object
    }
}
