import ArgumentParser
import MappedKV
import MappedKVFormat

/// `mappedkv info`: describes a store's files, damaged or not.
struct InfoCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "info",
        abstract: "Print the store's meta fields, sizes, CRC state, key count and holder.",
        discussion: """
            The files are read, never written; a damaged store is described, not opened, and the \
            exit status says what `verify` says (4 damaged, 5 wrong key, 7 no key given for a store \
            that looks encrypted). With --json: one object with the same fields (meta null when \
            unreadable, status "sound", "repairable", "damaged" or "missingKey", problem null or \
            text). \(ExitStatus.helpText)
            """)

    @OptionGroup var store: StoreOptions
    @Flag(name: .long, help: "Print one JSON object.")
    var json = false

    func run() throws {
        store.noteUnusedByInspection(command: "info")
        let report = try reportingErrors {
            try StoreInspector.inspect(id: store.id, directory: store.root, cryptKey: store.resolvedKey())
        }
        if json {
            try JSONOutput.print(InspectionSummary.infoJSON(report))
        } else {
            print(InspectionText.info(report), terminator: "")
        }
        let status = InspectionSummary.exitStatus(report)
        if status != .ok { throw status.exitCode }
    }
}

/// Text renderings of an ``InspectionReport``.
enum InspectionText {
    static func hex32(_ value: UInt32) -> String { InspectionSummary.hex32(value) }

    /// `name<TAB>value` lines for `info`.
    static func info(_ report: InspectionReport) -> String {
        var lines: [(String, String)] = [
            ("id", report.location.id),
            ("dataPath", report.location.dataPath),
            ("metaPath", report.location.metaPath),
        ]
        if let meta = report.storedMeta {
            lines += [
                ("version", "\(meta.version)"),
                ("sequence", "\(meta.sequence)"),
                ("crc", hex32(meta.crcDigest)),
                ("lastConfirmedActualSize", "\(meta.lastConfirmedActualSize)"),
                ("lastConfirmedCRC", hex32(meta.lastConfirmedCRC)),
                ("flags", "0x" + String(meta.flags, radix: 16)),
                ("iv", Hex.encode(meta.iv)),
            ]
        } else {
            lines.append(("meta", "unreadable"))
        }
        lines += [
            ("actualSize", "\(report.actualSize)"),
            ("fileSize", "\(report.dataFileSize)"),
            ("metaFileSize", "\(report.metaFileSize)"),
            ("header", "\(report.header)"),
            ("lengthOK", report.lengthIsValid ? "yes" : "no"),
            ("computedCRC", report.computedCRC.map(hex32) ?? "-"),
            ("crcOK", report.crcIsValid ? "yes" : "no"),
            ("holder", report.holder.isEmpty ? "-" : Hex.encode(report.holder)),
            ("keys", "\(report.liveKeyCount)"),
            // The same words as `verify`'s status line, "ok" for a sound store.
            ("status", report.isSound ? "ok" : VerificationText.status(report)),
        ]
        return lines.map { "\($0.0)\t\($0.1)\n" }.joined()
    }
}
