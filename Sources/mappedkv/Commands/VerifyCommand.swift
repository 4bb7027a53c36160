import ArgumentParser
import Foundation
import MappedKV

/// `mappedkv verify`: reports what the store's files hold and whether they load, changing nothing.
struct VerifyCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "verify",
        abstract: "Check sizes, CRC, last confirmed state and records; exit 0 only if the store is sound.",
        discussion: """
            Prints what it checked and found, one fact per line, ending with `status: sound`, \
            `status: repairable without loss: ...` or `status: damaged: ...` followed by what a \
            recovery would keep and drop, or `status: encrypted, no key given: ...` for a store whose \
            meta file holds an IV and whose records do not load without a key. Exits 0 only if \
            sound: 4 if damaged (or repairable), 5 if the damage points to a wrong key, 7 if no key \
            was given for a store that looks encrypted. The files are only read. With --json: one \
            object (id, dataPath, files, actualSize, lengthOK, crc, lastConfirmedOK, records, live, \
            journal, status "sound"/"repairable"/"damaged"/"missingKey", problem, and recovery: what \
            a recovery would keep and drop, or null). \(ExitStatus.helpText)
            """)

    @OptionGroup var store: StoreOptions
    @Flag(name: .long, help: "Print one JSON object.")
    var json = false

    func run() throws {
        store.noteUnusedByInspection(command: "verify")
        let report = try reportingErrors {
            try StoreInspector.inspect(id: store.id, directory: store.root, cryptKey: store.resolvedKey())
        }
        if json {
            try JSONOutput.print(InspectionSummary.verifyJSON(report))
        } else {
            for line in VerificationText.lines(report) { print(line) }
        }
        let status = InspectionSummary.exitStatus(report)
        if status != .ok { throw status.exitCode }
    }
}

/// The lines `verify` and `repair` print about an inspection.
enum VerificationText {
    static func lines(_ report: InspectionReport) -> [String] {
        var lines = [
            "store: \(report.location.id) (\(report.location.dataPath))",
            "files: data \(report.dataFileSize) bytes, meta \(report.metaFileSize) bytes",
        ]
        if let meta = report.storedMeta {
            lines.append(
                "meta: version \(meta.version), sequence \(meta.sequence), flags \(meta.flags)")
            lines.append(
                "actual size: \(report.actualSize) (\(report.lengthIsValid ? "fits the file" : "does NOT fit the file"))"
            )
            let computed = report.computedCRC.map(InspectionText.hex32) ?? "-"
            lines.append(
                "crc: stored \(InspectionText.hex32(meta.crcDigest)), computed \(computed) (\(report.crcIsValid ? "match" : "MISMATCH"))"
            )
            lines.append(
                "last confirmed: size \(meta.lastConfirmedActualSize), crc \(InspectionText.hex32(meta.lastConfirmedCRC)) (\(report.lastConfirmedIsValid ? "valid" : "not valid"))"
            )
        }
        if let decode = report.decode {
            let stop = decode.error.map { ", decoding stopped at byte \(decode.validEnd): \($0)" } ?? ""
            lines.append(
                "records: \(decode.recordCount) decodable (\(report.deletionRecordCount) deletions, \(report.supersededRecordCount) duplicates superseded)\(stop)"
            )
        }
        lines.append(
            "live: \(report.liveKeyCount) keys, \(report.liveBytes) bytes; space amplification \(InspectionSummary.spaceAmplificationText(report))"
        )
        if report.journalPresent {
            lines.append("write-back journal: present (a read-write open finishes or drops it)")
        }
        lines.append("status: " + status(report))
        if case .damaged(let event) = report.verdict { lines.append("recovery would: \(event.proposal)") }
        if case .missingCryptKey(let event) = report.verdict {
            lines.append("pass its key; only if it is a plain store, `repair --plain` would: \(event.proposal)")
        }
        return lines
    }

    static func status(_ report: InspectionReport) -> String {
        switch report.verdict {
        case .sound: report.problem.map { "damaged: \($0)" } ?? "sound"
        case .losslessRepair, .damaged, .crashLoss, .missingCryptKey: report.verdict.description
        }
    }
}
