import Foundation
import MappedKV
import MappedKVCrypto
import MappedKVFormat
import MappedKVProcessTestSupport
import Testing

/// An encrypted store given no key: every command that opens it says so (exit status 7) and
/// leaves the files untouched; `repair` never rewrites ciphertext as a plain store, unless
/// `--plain` says the store is plain.
@Suite("Missing key")
struct MissingKeyTests {
    static let key = "the-right-key"

    /// A two-key encrypted store written by the CLI (with a random IV).
    static func encryptedStore(_ root: String) throws -> [String] {
        let store = CLI.store(root, "s")
        try CLI.succeed(["set", "--create"] + store + ["--crypt-key", key, "k1", "first value"])
        try CLI.succeed(["set"] + store + ["--crypt-key", key, "k2", "second value"])
        return store
    }

    /// Store `s` under `root` as an encrypted two-key store from a given IV and holder, as the
    /// library writes one (version 4, region encrypted from the meta's IV).
    static func writeEncryptedStore(_ root: String, iv: [UInt8], holder: UInt32) throws {
        var region: [UInt8] = []
        Varint.append(UInt64(holder), to: &region)
        for (key, value) in [("k1", "first value"), ("k2", "second value")] {
            let payload = value.payloadBytes
            Array(key.utf8).withUnsafeBytes { keyBytes in
                payload.withUnsafeBytes { Record.append(key: keyBytes, value: $0, to: &region) }
            }
        }
        let cryptKey = try #require(CryptKey(Array(Self.key.utf8)))
        try CFBStream(key: cryptKey.aesKey, iv: iv).encrypt(&region)
        var meta = MetaInfo()
        _ = meta.update(
            actualSize: UInt32(region.count), crc: CRC32.checksum(region), iv: InitializationVector(iv),
            increasesSequence: true)
        var data = [UInt8](repeating: 0, count: 4096)
        withUnsafeBytes(of: UInt32(region.count).littleEndian) { data.replaceSubrange(0..<4, with: $0) }
        data.replaceSubrange(4..<(4 + region.count), with: region)
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
        try Data(data).write(to: URL(fileURLWithPath: root + "/s"))
        try Data(meta.serialized + [UInt8](repeating: 0, count: 4096 - MetaInfo.size))
            .write(to: URL(fileURLWithPath: root + "/s.crc"))
    }

    @Test("every command that opens an encrypted store without its key exits 7 with the message and changes nothing")
    func everyCommandSaysTheKeyIsMissing() throws {
        try TemporaryDirectory.with { tmp in
            let root = tmp.path("root")
            let store = try Self.encryptedStore(root)
            let before = try DirectorySnapshot(root)
            let commands: [[String]] = [
                ["dump"], ["get", "k1"], ["keys"], ["export"], ["repair"], ["repair", "--discard"],
                ["repair", "--force"],
                ["set", "k3", "v"], ["remove", "k1"], ["apply"], ["expire", "--enable"], ["rekey", "--new-key", "x"],
            ]
            for command in commands {
                let result = try CLI.fail([command[0]] + store + command.dropFirst(), stdin: "set-int32 k 1\n")
                #expect(result.status == 7, "\(result)")
                #expect(result.stderr.contains("store 's' looks encrypted (its meta file holds an IV)"), "\(result)")
                #expect(result.stderr.contains("no key was given: pass its key"), "\(result)")
                #expect(!result.stderr.contains("is damaged"), "\(result)")
            }
            for command in ["verify", "info"] {
                let result = try CLI.run([command] + store)
                #expect(result.status == 7, "\(result)")
                #expect(result.stdout.contains("encrypted, no key given"), "\(result)")
                let json = try CLI.run([command, "--json"] + store)
                #expect(json.status == 7 && json.stdout.contains("\"status\":\"missingKey\""), "\(json)")
            }
            #expect(try DirectorySnapshot(root) == before, "a command changed the store's directory")
            #expect(try CLI.succeed(["get"] + store + ["--crypt-key", Self.key, "k2"]).stdout == "second value\n")
        }
    }

    /// About one two-key store in 150 has ciphertext that decodes as a record without the key:
    /// `repair` used to keep that record and rewrite the store as plain, and the key was refused.
    @Test("repair without the key never rewrites ciphertext that decodes as a record")
    func ciphertextThatDecodesIsNotRepaired() throws {
        try TemporaryDirectory.with { tmp in
            let root = tmp.path("root")
            let store = CLI.store(root, "s")
            var found: UInt64?
            // Seeds in turn until the ciphertext, read without the key, holds a record: the same
            // seed on every run.
            for seed in UInt64(0)..<20_000 {
                var random = SeededRandom(seed: seed)
                let iv = (0..<16).map { _ in UInt8.random(in: 0...255, using: &random) }
                let holder = UInt32.random(in: 0x20_0000...0x0FFF_FFFF, using: &random)
                try Self.writeEncryptedStore(root, iv: iv, holder: holder)
                let report = try StoreInspector.inspect(id: "s", directory: root)
                if case .missingCryptKey(let event) = report.verdict, event.proposal.keptKeys > 0 {
                    found = seed
                    break
                }
            }
            let seed = try #require(found)
            let before = try DirectorySnapshot(root)
            let repair = try CLI.fail(["repair"] + store)
            #expect(repair.status == 7 && repair.stderr.contains("no key was given"), "seed \(seed): \(repair)")
            #expect(try DirectorySnapshot(root) == before, "seed \(seed): repair changed the store's directory")
            let dump = try CLI.succeed(["dump"] + store + ["--crypt-key", Self.key]).stdout
            #expect(dump.contains("k1\t") && dump.contains("k2\t") && dump.hasSuffix("#count\t2\n"), "\(dump)")
            #expect(try CLI.succeed(["get"] + store + ["--crypt-key", Self.key, "k1"]).stdout == "first value\n")
        }
    }

    @Test("repair --plain recovers a plain store with a stale IV; without it, status 7 and nothing changes")
    func repairPlainRecoversAStaleIVStore() throws {
        try TemporaryDirectory.with { tmp in
            let root = tmp.path("root")
            let store = CLI.store(root, "s")
            // A store decrypted by rekey; k2 is appended after that write-back. MappedKV zeroes
            // the IV of the plain store it rewrites, MMKV's reKey leaves the old one: put one back.
            try CLI.succeed(["set", "--create"] + store + ["--crypt-key", Self.key, "k1", "first value"])
            try CLI.succeed(["rekey"] + store + ["--crypt-key", Self.key])
            try CLI.succeed(["set"] + store + ["k2", "second value"])
            let metaPath = root + "/s.crc"
            var metaFile = try Data(contentsOf: URL(fileURLWithPath: metaPath))
            #expect(!metaFile[12..<28].contains { $0 != 0 }, "MappedKV's rekey to plain text zeroes the IV")
            metaFile.replaceSubrange(12..<28, with: (0..<16).map { UInt8(0xA0 + $0) })
            try metaFile.write(to: URL(fileURLWithPath: metaPath))
            #expect(try CLI.succeed(["dump"] + store).stdout.hasSuffix("#count\t2\n"), "a stale IV still loads")
            // Ordinary CRC damage in the last append.
            let dataPath = root + "/s"
            var data = try Data(contentsOf: URL(fileURLWithPath: dataPath))
            let meta = try MetaInfo(parsing: [UInt8](try Data(contentsOf: URL(fileURLWithPath: metaPath))))
            data[4 + Int(meta.actualSize) - 1] ^= 0x01
            try data.write(to: URL(fileURLWithPath: dataPath))

            let before = try DirectorySnapshot(root)
            let refused = try CLI.fail(["repair"] + store)
            #expect(refused.status == 7 && refused.stderr.contains("repair --plain"), "\(refused)")
            #expect(try DirectorySnapshot(root) == before)
            let keyed = try CLI.fail(["repair", "--plain"] + store + ["--crypt-key", Self.key])
            #expect(keyed.status == 64, "\(keyed)")

            let repaired = try CLI.succeed(["repair", "--plain"] + store)
            #expect(repaired.stdout.contains("before: damaged: CRC mismatch"), "\(repaired)")
            #expect(repaired.stdout.contains("after: sound, 1 keys"), "\(repaired)")
            #expect(try CLI.succeed(["get"] + store + ["k1"]).stdout == "first value\n")
            let copies = try FileManager.default.contentsOfDirectory(atPath: root).filter { $0.contains(".corrupt-") }
            #expect(copies.count == 2, "\(copies)")
        }
    }
}
