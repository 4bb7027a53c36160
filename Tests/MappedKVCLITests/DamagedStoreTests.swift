import Foundation
import MappedKVFormat
import MappedKVProcessTestSupport
import Testing

/// Damaged copies of the golden stores: `verify` names the damage, every command that opens the
/// store refuses cleanly, and nothing changes either file.
@Suite("Damaged stores")
struct DamagedStoreTests {
    /// One way of damaging a store's files.
    enum Damage: String, CaseIterable, Sendable, CustomTestStringConvertible {
        /// One byte inside the used data region (file offset 4 + 10) flipped.
        case flippedByte
        /// The data file truncated to 50 bytes.
        case truncatedData
        /// The `.crc` meta file truncated to 10 bytes.
        case truncatedMeta
        /// The `.crc` meta file deleted while the data file holds records.
        case deletedMeta
        /// The data file deleted while the meta file records data.
        case deletedData
        /// The first record's key length made to run far past the region, with the meta CRC fixed up to match.
        case undecodableRecords
        /// The meta's actualSize set past the end of the data file.
        case actualSizePastEnd

        var testDescription: String { rawValue }

        /// A word `verify`'s one-line reason must contain.
        var verifyReason: String {
            switch self {
            case .flippedByte: "CRC"
            case .truncatedData: "does not fit"
            case .truncatedMeta: "meta"
            case .deletedMeta: "meta file is missing"
            case .deletedData: "data file is missing"
            case .undecodableRecords: "decode"
            case .actualSizePastEnd: "does not fit"
            }
        }

        /// Whether the damage leaves the region's CRC matching the meta.
        var crcStillMatches: Bool { self == .undecodableRecords }

        /// Whether the damage removes one of the two files.
        var deletesAFile: Bool { self == .deletedMeta || self == .deletedData }

        func apply(dataPath: String, metaPath: String) throws {
            switch self {
            case .flippedByte:
                var data = try Data(contentsOf: URL(fileURLWithPath: dataPath))
                data[4 + 10] ^= 0xFF
                try data.write(to: URL(fileURLWithPath: dataPath))
            case .truncatedData:
                try truncate(dataPath, to: 50)
            case .truncatedMeta:
                try truncate(metaPath, to: 10)
            case .deletedMeta:
                try FileManager.default.removeItem(atPath: metaPath)
            case .deletedData:
                try FileManager.default.removeItem(atPath: dataPath)
            case .undecodableRecords:
                var data = [UInt8](try Data(contentsOf: URL(fileURLWithPath: dataPath)))
                var meta = [UInt8](try Data(contentsOf: URL(fileURLWithPath: metaPath)))
                let actualSize = Int(Self.u32(meta, at: MetaInfo.Offset.actualSize))
                // The region starts with the item-size holder (a varint); the first record follows.
                var firstRecord = 4
                while data[firstRecord] & 0x80 != 0 { firstRecord += 1 }
                firstRecord += 1
                // A key length of 2,097,151 bytes (varint ff ff 7f): far longer than what is left of the region.
                data[firstRecord] = 0xFF
                data[firstRecord + 1] = 0xFF
                data[firstRecord + 2] = 0x7F
                let crc = CRC32.checksum(data[4..<(4 + actualSize)])
                Self.put32(crc, into: &meta, at: MetaInfo.Offset.crcDigest)
                try Data(data).write(to: URL(fileURLWithPath: dataPath))
                try Data(meta).write(to: URL(fileURLWithPath: metaPath))
            case .actualSizePastEnd:
                var meta = [UInt8](try Data(contentsOf: URL(fileURLWithPath: metaPath)))
                Self.put32(5000, into: &meta, at: MetaInfo.Offset.actualSize)
                try Data(meta).write(to: URL(fileURLWithPath: metaPath))
            }
        }

        private static func u32(_ bytes: [UInt8], at offset: Int) -> UInt32 {
            (0..<4).reduce(0) { $0 | UInt32(bytes[offset + $1]) << (8 * $1) }
        }

        private static func put32(_ value: UInt32, into bytes: inout [UInt8], at offset: Int) {
            for i in 0..<4 { bytes[offset + i] = UInt8(truncatingIfNeeded: value >> (8 * i)) }
        }

        private func truncate(_ path: String, to size: UInt64) throws {
            let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
            defer { try? handle.close() }
            try handle.truncate(atOffset: size)
        }
    }

    /// Both files' bytes (nil for a missing file).
    struct Snapshot: Equatable {
        var data: Data?
        var meta: Data?
        var directory: [String]

        init(root: String, dataPath: String, metaPath: String) throws {
            data = FileManager.default.contents(atPath: dataPath)
            meta = FileManager.default.contents(atPath: metaPath)
            directory = try FileManager.default.contentsOfDirectory(atPath: root).sorted()
        }
    }

    static let cases: [(GoldenCase, Damage)] = GoldenCase.plain.flatMap { golden in
        Damage.allCases.map { (golden, $0) }
    }

    /// Copies `golden` into `tmp`, damages the copy, and returns its root and file paths.
    private func damagedCopy(
        of golden: GoldenCase, _ damage: Damage, in tmp: TemporaryDirectory, as name: String = "root"
    ) throws -> (root: String, data: String, meta: String) {
        let root = try tmp.copyStore(from: golden.root, as: name)
        let data = root + "/" + golden.id
        let meta = data + ".crc"
        try damage.apply(dataPath: data, metaPath: meta)
        return (root, data, meta)
    }

    @Test("verify reports what it checked, exits non-zero and names the damage in its status line", arguments: cases)
    func verifyReportsDamage(_ golden: GoldenCase, _ damage: Damage) throws {
        try TemporaryDirectory.with { tmp in
            let (root, data, meta) = try damagedCopy(of: golden, damage, in: tmp)
            let before = try Snapshot(root: root, dataPath: data, metaPath: meta)
            let result = try CLI.run(["verify"] + CLI.store(root, golden.id))
            #expect(result.exitedNormally, "verify crashed: \(result)")
            #expect(result.failedCleanly, "verify accepted a damaged store: \(result)")
            let lines = result.stdout.split(separator: "\n").map(String.init)
            let status = lines.first { $0.hasPrefix("status: ") } ?? result.stderr
            #expect(status.hasPrefix("status: damaged") || !result.stderr.isEmpty, "no damaged status: \(result)")
            #expect(
                status.contains(damage.verifyReason),
                "verify's status should mention '\(damage.verifyReason)': \(result)")
            if !damage.deletesAFile && damage != .truncatedMeta {
                #expect(
                    lines.contains { $0.hasPrefix("crc: ") } && lines.contains { $0.hasPrefix("last confirmed: ") },
                    "verify should show the CRC and last confirmed state: \(result)")
            }
            #expect(try Snapshot(root: root, dataPath: data, metaPath: meta) == before, "verify changed the files")
        }
    }

    @Test("info describes the damage without changing the files", arguments: cases)
    func infoDescribesDamage(_ golden: GoldenCase, _ damage: Damage) throws {
        try TemporaryDirectory.with { tmp in
            let (root, data, meta) = try damagedCopy(of: golden, damage, in: tmp)
            let before = try Snapshot(root: root, dataPath: data, metaPath: meta)
            let result = try CLI.run(["info"] + CLI.store(root, golden.id))
            let info = TabSeparated.parse(result.stdout)
            // info describes the store and agrees with verify: the same status words and exit status.
            let verify = try CLI.run(["verify"] + CLI.store(root, golden.id))
            let verifyStatus = verify.stdout.split(separator: "\n").first { $0.hasPrefix("status: ") }
            #expect(result.status == 4 || result.status == 5, "info should exit 4 or 5 for damage: \(result)")
            #expect(result.status == verify.status, "info \(result) and verify \(verify) disagree")
            #expect(info["status"].map { "status: " + $0 } == verifyStatus.map(String.init), "\(result)\n\(verify)")
            if !damage.deletesAFile {
                #expect(info["crcOK"] == (damage.crcStillMatches ? "yes" : "no"), "\(result)")
            }
            #expect(try Snapshot(root: root, dataPath: data, metaPath: meta) == before, "info changed the files")
        }
    }

    /// The commands that open the store, with their standard input.
    static let openingCommands: [(arguments: [String], stdin: String?)] = [
        (["dump"], nil),
        (["keys"], nil),
        (["get", "i32"], nil),
        (["get", "--type", "int32", "counter"], nil),
        (["set", "--create", "newkey", "value"], nil),
        (["set", "--create", "--type", "int32", "i32", "1"], nil),
        (["remove", "i32", "counter"], nil),
        (["apply", "--create"], "set-int32 newkey 1\nremove i32\n"),
        (["apply", "--create"], "clear\n"),
        (["apply", "--create"], "trim\n"),
    ]

    @Test("every command that opens the store fails cleanly and leaves both files unchanged", arguments: cases)
    func commandsRefuseDamagedStore(_ golden: GoldenCase, _ damage: Damage) throws {
        try TemporaryDirectory.with { tmp in
            for (number, command) in Self.openingCommands.enumerated() {
                // A fresh damaged copy for each command, so one command's fault cannot hide another's.
                let (root, data, meta) = try damagedCopy(of: golden, damage, in: tmp, as: "root\(number)")
                let before = try Snapshot(root: root, dataPath: data, metaPath: meta)
                let arguments = [command.arguments[0]] + CLI.store(root, golden.id) + command.arguments.dropFirst()
                let result = try CLI.run(arguments, stdin: command.stdin)
                #expect(result.exitedNormally, "crashed on a \(damage) store: \(result)")
                #expect(result.failedCleanly, "accepted a \(damage) store: \(result)")
                #expect(result.stdout.isEmpty, "printed output from a \(damage) store: \(result)")
                let message = result.stderr.trimmingCharacters(in: .whitespacesAndNewlines)
                #expect(!message.contains("\n"), "expected a one-line message: \(result)")
                if damage.deletesAFile {
                    // A read-only open finds no store; a read-write open refuses to recreate half of it.
                    #expect(message.contains("damaged") || message.contains("no store"), "\(result)")
                } else {
                    #expect(message.contains("damaged"), "expected a 'damaged' message: \(result)")
                }
                #expect(
                    try Snapshot(root: root, dataPath: data, metaPath: meta) == before,
                    "\(arguments.joined(separator: " ")) changed the files of a \(damage) store")
            }
        }
    }

    @Test(
        "an emptied (0-byte) .crc beside a data file that holds records is refused like a missing one",
        arguments: GoldenCase.plain)
    func emptiedMetaIsRefused(_ golden: GoldenCase) throws {
        // A missing .crc is refused ("the data file holds data but its .crc meta file is missing");
        // a 0-byte .crc reads as the all-zero meta, whose size comes from the data file's header,
        // which MMKV 2.4.2 leaves at 0: the store then looks empty and the next write destroys the records.
        try TemporaryDirectory.with { tmp in
            func emptiedCopy(_ name: String) throws -> (root: String, data: String, meta: String) {
                let root = try tmp.copyStore(from: golden.root, as: name)
                let data = root + "/" + golden.id
                try Data().write(to: URL(fileURLWithPath: data + ".crc"))
                return (root, data, data + ".crc")
            }
            let (verifyRoot, _, _) = try emptiedCopy("verify")
            let verify = try CLI.run(["verify"] + CLI.store(verifyRoot, golden.id))
            #expect(verify.failedCleanly, "verify accepted records with an empty meta file: \(verify)")
            for (number, command) in Self.openingCommands.enumerated() {
                let (root, data, meta) = try emptiedCopy("root\(number)")
                let before = try Snapshot(root: root, dataPath: data, metaPath: meta)
                let arguments = [command.arguments[0]] + CLI.store(root, golden.id) + command.arguments.dropFirst()
                let result = try CLI.run(arguments, stdin: command.stdin)
                #expect(result.exitedNormally, "crashed: \(result)")
                #expect(result.failedCleanly, "accepted records with an empty meta file: \(result)")
                #expect(
                    try Snapshot(root: root, dataPath: data, metaPath: meta) == before,
                    "\(arguments.joined(separator: " ")) changed the files")
            }
        }
    }
}
