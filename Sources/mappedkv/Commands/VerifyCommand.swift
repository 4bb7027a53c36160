import ArgumentParser
import MappedKV

/// `mappedkv verify`: checks sizes, CRC and decoding.
struct VerifyCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "verify",
        abstract: "Check sizes, CRC and decoding; exit 0 only if all check out.",
        discussion: "On damage, prints one line with the reason and exits 1. The files are only read.")

    @OptionGroup var store: StoreOptions

    func run() throws {
        let report = try reportingErrors { try StoreInspector.inspect(id: store.id, directory: store.root, cryptKey: store.resolvedKey()) }
        if let problem = report.problem {
            print("damaged: \(problem)")
            throw ExitCode.failure
        }
        let decode = report.decode
        print("ok: \(report.liveKeyCount) keys, \(decode?.recordCount ?? 0) records (\(report.deletionRecordCount) deletions, \(report.supersededRecordCount) superseded), actualSize \(report.actualSize), fileSize \(report.dataFileSize), crc \(InspectionText.hex32(report.computedCRC ?? 0))")
    }
}
