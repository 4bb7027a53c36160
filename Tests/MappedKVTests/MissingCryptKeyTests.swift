import Foundation
import MappedKVCrypto
import MappedKVFormat
import Testing

@testable import MappedKV

/// An encrypted store opened without its key: a clear error of its own, nothing written, no
/// handler consulted, and no recovery that keeps ciphertext as plain keys (docs/FORMAT.md 7.5a).
@Suite struct MissingCryptKeyTests {
    static let key = CryptKey(Array("the-right-key".utf8))!

    /// Both files of store `id`, to compare before and after.
    func files(_ dir: TemporaryDirectory, _ id: String = "s") -> [[UInt8]?] {
        [fileBytes(dir.file(id)), fileBytes(dir.file(id + ".crc"))]
    }

    func quarantined(_ dir: TemporaryDirectory) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: dir.path).filter { $0.contains(".corrupt-") }.sorted()
    }

    /// An encrypted store of two keys written by the library (a random IV).
    func encryptedStore(_ dir: TemporaryDirectory) throws {
        let store = try MappedKV(id: "s", directory: dir.path, configuration: Configuration(cryptKey: Self.key))
        try store.set("first value", forKey: "k1")
        try store.set("second value", forKey: "k2")
        store.close()
    }

    /// Store `s` in `dir` as MappedKV writes an encrypted two-key store, from a given IV and holder:
    /// version 4, the region encrypted from the meta's IV, CRC and size, last confirmed state.
    static func writeEncryptedStore(
        _ dir: TemporaryDirectory, iv: [UInt8], holder: UInt32, entries: [(String, String)]
    ) throws {
        var region: [UInt8] = []
        Varint.append(UInt64(holder), to: &region)
        for (key, value) in entries {
            let payload = value.payloadBytes
            Array(key.utf8).withUnsafeBytes { keyBytes in
                payload.withUnsafeBytes { Record.append(key: keyBytes, value: $0, to: &region) }
            }
        }
        try CFBStream(key: key.aesKey, iv: iv).encrypt(&region)
        var meta = MetaInfo()
        _ = meta.update(
            actualSize: UInt32(region.count), crc: CRC32.checksum(region), iv: InitializationVector(iv),
            increasesSequence: true)
        var data = [UInt8](repeating: 0, count: 4096)
        withUnsafeBytes(of: UInt32(region.count).littleEndian) { data.replaceSubrange(0..<4, with: $0) }
        data.replaceSubrange(4..<(4 + region.count), with: region)
        try writeFile(dir.file("s"), data)
        try writeFile(dir.file("s.crc"), meta.serialized + [UInt8](repeating: 0, count: 4096 - MetaInfo.size))
    }

    /// The first IV and holder, drawn from seeds 0, 1, ... in turn, for which the ciphertext of the
    /// two-key store decodes as at least one record without the key: the store that a keyless
    /// recovery used to rewrite as a plain store holding ciphertext. Deterministic: the same seed
    /// is found on every run.
    static func findCiphertextThatDecodesAsARecord(
        _ dir: TemporaryDirectory, entries: [(String, String)]
    ) throws -> (seed: UInt64, event: DamageEvent)? {
        for seed in UInt64(0)..<20_000 {
            var random = SplitMix64(seed: seed)
            let iv = (0..<16).map { _ in UInt8.random(in: 0...255, using: &random) }
            let holder = UInt32.random(in: 0x20_0000...0x0FFF_FFFF, using: &random)
            try writeEncryptedStore(dir, iv: iv, holder: holder, entries: entries)
            let report = try StoreInspector.inspect(id: "s", directory: dir.path)
            switch report.verdict {
            case .missingCryptKey(let event) where event.proposal.keptKeys > 0,
                .damaged(let event) where event.proposal.keptKeys > 0:
                return (seed, event)
            default: continue
            }
        }
        return nil
    }

    @Test(arguments: [false, true])
    func anEncryptedStoreOpenedWithoutItsKeyThrowsMissingCryptKeyAndChangesNothing(readOnly: Bool) throws {
        let dir = TemporaryDirectory("missing-key")
        try encryptedStore(dir)
        let before = files(dir)
        let events = EventLog()
        for handler: RecoveryHandler? in [
            nil,
            { event in
                events.append(event)
                return .recover
            },
        ] {
            let error = #expect(throws: MappedKVError.self) {
                _ = try MappedKV(
                    id: "s", directory: dir.path,
                    configuration: Configuration(isReadOnly: readOnly, recoveryHandler: handler))
            }
            #expect(error == .missingCryptKey(id: "s"))
            #expect(
                error?.description.contains("looks encrypted (its meta file holds an IV) and no key was given") == true)
        }
        #expect(events.all.isEmpty, "the handler was consulted: \(events.all)")
        #expect(files(dir) == before, "the files changed")
        #expect(try quarantined(dir).isEmpty)

        let store = try MappedKV(
            id: "s", directory: dir.path, configuration: Configuration(isReadOnly: readOnly, cryptKey: Self.key))
        #expect(try store.string(forKey: "k1") == "first value")
        #expect(try store.string(forKey: "k2") == "second value")
    }

    @Test func theInspectorReportsAMissingKeyNotDamage() throws {
        let dir = TemporaryDirectory("missing-key-inspect")
        try encryptedStore(dir)
        let report = try StoreInspector.inspect(id: "s", directory: dir.path)
        guard case .missingCryptKey = report.verdict else {
            Issue.record("verdict \(report.verdict)")
            return
        }
        #expect(!report.isSound)
        #expect(report.problem?.hasPrefix("encrypted, no key given") == true, "\(report.problem ?? "nil")")
        #expect(try StoreInspector.inspect(id: "s", directory: dir.path, cryptKey: Self.key).isSound)
    }

    @Test func treatingTheStoreAsPlainKeepsTheOldRecoveryAvailable() throws {
        let dir = TemporaryDirectory("missing-key-plain")
        try encryptedStore(dir)
        let before = files(dir)
        let events = EventLog()
        let store = try MappedKV(
            id: "s", directory: dir.path,
            configuration: Configuration(
                recoveryHandler: { event in
                    events.append(event)
                    return .recover
                }, treatsStoreAsPlain: true))
        #expect(events.all.count == 1, "the handler decides, as for any damaged plain store")
        #expect(store.recoveryReport?.decision == .recover)
        store.close()
        // The damaged files were copied aside first, and the copy still opens with the key.
        let copies = try quarantined(dir)
        #expect(copies.count == 2)
        let copyID = try #require(copies.first { !$0.hasSuffix(".crc") })
        #expect(files(dir, copyID) == before)
        let copy = try MappedKV(
            id: copyID, directory: dir.path, configuration: Configuration(isReadOnly: true, cryptKey: Self.key))
        #expect(try copy.string(forKey: "k2") == "second value")
    }

    /// About one two-key store in 150 has ciphertext that decodes as a record without the key.
    /// A recovery then kept that record, rewrote the store as plain, and the right key was refused.
    @Test func ciphertextThatDecodesAsARecordIsNeverRecoveredAsPlainKeys() throws {
        let dir = TemporaryDirectory("missing-key-decodes")
        let entries = [("k1", "first value"), ("k2", "second value")]
        let found = try #require(try Self.findCiphertextThatDecodesAsARecord(dir, entries: entries))
        #expect(found.event.kind == .undecodable, "read as plain, \(found.event)")
        let before = files(dir)

        // What `mappedkv repair` does without a key: a read-write open whose handler recovers.
        let events = EventLog()
        let error = #expect(throws: MappedKVError.self) {
            _ = try MappedKV(
                id: "s", directory: dir.path,
                configuration: Configuration(recoveryHandler: { event in
                    events.append(event)
                    return .recover
                }))
        }
        #expect(error == .missingCryptKey(id: "s"), "seed \(found.seed)")
        #expect(events.all.isEmpty)
        #expect(files(dir) == before)
        #expect(try quarantined(dir).isEmpty)

        let store = try MappedKV(id: "s", directory: dir.path, configuration: Configuration(cryptKey: Self.key))
        #expect(try contents(of: store) == ["k1": "first value".payloadBytes, "k2": "second value".payloadBytes])
    }

    /// A decrypted store keeps its IV (MMKV's and `rekey(to: nil)`'s): it still opens without a
    /// key while it decodes. Damaged, it cannot be told from an encrypted store by its meta, so
    /// the missing key is reported until the caller says it is plain (the decision of
    /// docs/FORMAT.md 7.5a); then it recovers as any plain store does.
    @Test func aPlainStoreWithAStaleIVOpensAndRecoversOnlyWhenSaidToBePlain() throws {
        let dir = TemporaryDirectory("stale-iv")
        let store = try MappedKV(id: "s", directory: dir.path)
        try store.set("first value", forKey: "k1")
        try store.rekey(to: nil)  // a full write-back: the last confirmed state holds k1
        try store.set("second value", forKey: "k2")
        store.close()
        var meta = try #require(fileBytes(dir.file("s.crc")))
        var random = SplitMix64(seed: 7)
        for offset in 12..<28 { meta[offset] = UInt8.random(in: 1...255, using: &random) }
        try writeFile(dir.file("s.crc"), meta)
        let parsed = try MetaInfo(parsing: meta)
        #expect(parsed.version >= .randomIV && parsed.iv != .zero)

        let reopened = try MappedKV(id: "s", directory: dir.path)
        #expect(try contents(of: reopened) == ["k1": "first value".payloadBytes, "k2": "second value".payloadBytes])
        reopened.close()
        #expect(try StoreInspector.inspect(id: "s", directory: dir.path).isSound)

        // Ordinary CRC damage in the last append.
        var data = try #require(fileBytes(dir.file("s")))
        data[4 + Int(parsed.actualSize) - 1] ^= 0x01
        try writeFile(dir.file("s"), data)
        let before = files(dir)
        let error = #expect(throws: MappedKVError.self) { _ = try MappedKV(id: "s", directory: dir.path) }
        #expect(error == .missingCryptKey(id: "s"))
        #expect(files(dir) == before)
        #expect(try quarantined(dir).isEmpty)

        let recovered = try MappedKV(
            id: "s", directory: dir.path, configuration: Configuration(treatsStoreAsPlain: true))
        #expect(recovered.recoveryReport?.event.kind == .crcMismatch)
        #expect(try contents(of: recovered) == ["k1": "first value".payloadBytes])
        #expect(try quarantined(dir).count == 2)
    }

    /// Only a meta from version 2 whose IV is not all zeros counts as holding an IV: a plain store
    /// written by MappedKV (zero IV) and a legacy one (version below 2, whatever the bytes) recover
    /// from damage without the option, as before.
    @Test func onlyANonZeroIVFromVersion2Counts() throws {
        var meta = MetaInfo()
        meta.version = .flag
        #expect(!MissingCryptKey.metaHoldsIV(meta))
        meta.iv = InitializationVector([UInt8](repeating: 0, count: 15) + [1])!
        #expect(MissingCryptKey.metaHoldsIV(meta))
        meta.version = .randomIV
        #expect(MissingCryptKey.metaHoldsIV(meta))
        meta.version = .sequence
        #expect(!MissingCryptKey.metaHoldsIV(meta))

        let dir = TemporaryDirectory("zero-iv")
        let store = try MappedKV(id: "s", directory: dir.path)
        try store.set("first value", forKey: "k1")
        try store.rekey(to: nil)  // the last confirmed state holds k1
        try store.set("second value", forKey: "k2")
        store.close()
        let stored = try MetaInfo(parsing: try #require(fileBytes(dir.file("s.crc"))))
        #expect(stored.iv == .zero)
        var data = try #require(fileBytes(dir.file("s")))
        data[4 + Int(stored.actualSize) - 1] ^= 0x01
        try writeFile(dir.file("s"), data)
        let recovered = try MappedKV(id: "s", directory: dir.path)
        #expect(recovered.recoveryReport?.event.kind == .crcMismatch)
        #expect(try contents(of: recovered) == ["k1": "first value".payloadBytes])
    }
}
