import Foundation
import MappedKVCrypto
import MappedKVFormat
import Testing

@testable import MappedKV

/// Encrypted stores: MMKV's encrypted files load and accept appends, every rewrite draws a fresh IV,
/// and a wrong key is refused without writing a byte.
@Suite struct EncryptedStoreTests {
    static let keyB = CryptKey(Array("MMKVKey0123456".utf8))!
    static let keyB16 = CryptKey(Array("MMKVKey012345678".utf8))!

    func meta(_ dir: TemporaryDirectory, _ id: String) throws -> MetaInfo {
        try MetaInfo(parsing: try #require(fileBytes(dir.file(id + ".crc"))))
    }

    /// Decrypts and decodes the region independently of the store: key bytes -> payload hex.
    func independentlyDecoded(_ dir: TemporaryDirectory, _ id: String, key: CryptKey) throws -> [String: String] {
        let data = try #require(fileBytes(dir.file(id)))
        let meta = try self.meta(dir, id)
        var region = Array(data[4..<(4 + Int(meta.actualSize))])
        #expect(CRC32.checksum(region) == meta.crcDigest)
        try CFBStream(key: key.aesKey, iv: meta.iv.bytes).decrypt(&region)
        var live: [String: String] = [:]
        let summary = region.withUnsafeBytes { plain in
            RecordDecoder.decode(plain, skipsHolder: true) { record in
                let name = String(decoding: plain[record.keyRange], as: UTF8.self)
                live[name] = record.isDeletion ? nil : hex(Array(plain[record.valueRange]))
            }
        }
        #expect(summary.isComplete)
        return live
    }

    @Test(arguments: [("b_crypt", "case_b", keyB), ("b16_crypt16", "case_b16", keyB16)])
    func mmkvEncryptedStoresLoad(caseName: String, id: String, key: CryptKey) throws {
        let root = "\(vectorsDirectory)/mmkv-2.4.2/\(caseName)/root"
        let store = try MappedKV(id: id, directory: root, configuration: Configuration(isReadOnly: true, cryptKey: key))
        #expect(try contents(of: store).mapValues(hex) == (try readExpect(caseName, id: id)))
        #expect(try store.string(forKey: "s") == "hello, MMKV ✓")
    }

    @Test func appendsContinueMMKVsCipherStreamFromAnyOffset() throws {
        let dir = TemporaryDirectory("enc-append")
        try copyGoldenStore("b_crypt", to: dir)
        var model = try readExpect("b_crypt", id: "case_b")
        let before = try meta(dir, "case_b")
        #expect(before.actualSize % 16 != 0, "the first append starts mid-block")
        var offsets: Set<Int> = []
        for i in 0..<40 {
            let store = try MappedKV(
                id: "case_b", directory: dir.path, configuration: Configuration(cryptKey: Self.keyB))
            let value = String(repeating: "x", count: i % 23)
            offsets.insert(try store.actualSize % 16)
            try store.set(value, forKey: "k\(i % 7)")
            model["k\(i % 7)"] = hex(value.payloadBytes)
            store.close()
            let reopened = try MappedKV(
                id: "case_b", directory: dir.path, configuration: Configuration(cryptKey: Self.keyB))
            #expect(try contents(of: reopened).mapValues(hex) == model, "after append \(i)")
        }
        #expect(offsets.count >= 12, "appends started at many offsets within a block: \(offsets.sorted())")
        let after = try meta(dir, "case_b")
        #expect(after.sequence == before.sequence && after.iv == before.iv, "appends keep MMKV's IV and sequence")
        #expect(try independentlyDecoded(dir, "case_b", key: Self.keyB) == model)
    }

    /// CFB is safe as long as one IV never starts two different plain texts: so while the IV
    /// stays, the ciphertext may only grow at its end (appends continue the stream, and a file
    /// that only grows keeps its records); any other change must come with an IV never used before.
    @Test func everyRewriteAndClearDrawsAFreshIV() throws {
        let dir = TemporaryDirectory("enc-iv")
        let key = try #require(CryptKey(Array("iv-test".utf8), aes256: true))
        let store = try MappedKV(id: "s", directory: dir.path, configuration: Configuration(cryptKey: key))
        var ivs: Set<InitializationVector> = []
        var previous: (iv: InitializationVector, region: [UInt8])?
        var rewrites = 0
        for i in 0..<1_500 {
            // Distinct keys first (the file grows), then overwrites (compactions).
            try store.set("value-\(i)-" + String(repeating: "v", count: 40), forKey: "key-\(i < 300 ? i : i % 150)")
            let now = try meta(dir, "s")
            #expect(now.version >= .randomIV)
            let data = try #require(fileBytes(dir.file("s")))
            let region = Array(data[4..<(4 + Int(now.actualSize))])
            if let previous, previous.iv == now.iv {
                #expect(region.starts(with: previous.region), "the region changed under the same IV at set \(i)")
            } else {
                #expect(ivs.insert(now.iv).inserted, "a rewrite reused an IV")
                rewrites += 1
            }
            previous = (now.iv, region)
        }
        #expect(rewrites > 3, "the overwrites compacted the store")
        try store.clearAll()
        #expect(ivs.insert(try meta(dir, "s").iv).inserted, "clearAll reused an IV")
        try store.set("after-clear", forKey: "k")
        #expect(ivs.count > 3)
        #expect(FileStructure.problems(directory: dir.path, id: "s", key: key).isEmpty)
        let data = try #require(fileBytes(dir.file("s")))
        #expect(!String(decoding: data, as: UTF8.self).contains("value-"), "no plaintext on disk")
        store.close()
        let reopened = try MappedKV(id: "s", directory: dir.path, configuration: Configuration(cryptKey: key))
        #expect(try reopened.string(forKey: "k") == "after-clear")
    }

    @Test func legacyStoresWithoutARandomIVAreUpgradedOnFirstWrite() throws {
        // Meta version 1: the IV is the first 16 bytes of the padded key (docs/FORMAT.md section 4).
        let dir = TemporaryDirectory("enc-legacy")
        let key = Self.keyB
        var region = [0x80, 0x80, 0x80, 0x01] + [3] + Array("old".utf8) + [6, 5] + Array("value".utf8)
        try CFBStream(key: key.aesKey, iv: key.legacyIV).encrypt(&region)
        var data = [UInt8](repeating: 0, count: 4096)
        data.replaceSubrange(4..<(4 + region.count), with: region)
        var meta = MetaInfo()
        meta.version = .sequence
        meta.sequence = 1
        meta.actualSize = UInt32(region.count)
        meta.crcDigest = CRC32.checksum(region)
        try writeFile(dir.file("s"), data)
        try writeFile(dir.file("s.crc"), meta.serialized + [UInt8](repeating: 0, count: 4096 - 112))
        // Version 1 takes its size from the header, not the meta.
        let size = UInt32(region.count)
        data.replaceSubrange(0..<4, with: [UInt8(size & 0xFF), UInt8(size >> 8 & 0xFF), 0, 0])
        try writeFile(dir.file("s"), data)

        let store = try MappedKV(id: "s", directory: dir.path, configuration: Configuration(cryptKey: key))
        #expect(try store.string(forKey: "old") == "value")
        try store.set("new", forKey: "fresh")
        let upgraded = try self.meta(dir, "s")
        #expect(upgraded.version == .flag && upgraded.iv != InitializationVector(key.legacyIV)!)
        #expect(upgraded.sequence == 2)
        store.close()
        let reopened = try MappedKV(id: "s", directory: dir.path, configuration: Configuration(cryptKey: key))
        #expect(try reopened.string(forKey: "old") == "value")
        #expect(try reopened.string(forKey: "fresh") == "new")
    }

    @Test func legacyStoresSurviveARemoveAsTheirFirstWrite() throws {
        // A remove must not raise the meta version past 2 without a random IV: the next load
        // would take the IV from the meta and read the region as garbage.
        let dir = TemporaryDirectory("enc-legacy-remove")
        let key = Self.keyB
        var region = [0x80, 0x80, 0x80, 0x01] + [3] + Array("old".utf8) + [6, 5] + Array("value".utf8)
        region += [4] + Array("keep".utf8) + [5, 4] + Array("kept".utf8)
        try CFBStream(key: key.aesKey, iv: key.legacyIV).encrypt(&region)
        var data = [UInt8](repeating: 0, count: 4096)
        data.replaceSubrange(4..<(4 + region.count), with: region)
        let size = UInt32(region.count)
        data.replaceSubrange(0..<4, with: [UInt8(size & 0xFF), UInt8(size >> 8 & 0xFF), 0, 0])
        var meta = MetaInfo()
        meta.version = .sequence
        meta.sequence = 1
        meta.actualSize = size
        meta.crcDigest = CRC32.checksum(region)
        try writeFile(dir.file("s"), data)
        try writeFile(dir.file("s.crc"), meta.serialized + [UInt8](repeating: 0, count: 4096 - 112))

        let store = try MappedKV(id: "s", directory: dir.path, configuration: Configuration(cryptKey: key))
        try store.removeValue(forKey: "old")
        let upgraded = try self.meta(dir, "s")
        #expect(upgraded.version >= .randomIV && upgraded.iv != InitializationVector(key.legacyIV)!)
        store.close()
        let reopened = try MappedKV(id: "s", directory: dir.path, configuration: Configuration(cryptKey: key))
        #expect(try reopened.string(forKey: "keep") == "kept")
        #expect(try reopened.contains("old") == false)
        try reopened.removeValue(forKey: "keep")
        reopened.close()
        let empty = try MappedKV(id: "s", directory: dir.path, configuration: Configuration(cryptKey: key))
        #expect(try empty.count == 0)
    }

    @Test func wrongKeysAreRefusedAndWriteNothing() throws {
        let dir = TemporaryDirectory("enc-wrong")
        try copyGoldenStore("b_crypt", to: dir)
        let plainDir = TemporaryDirectory("enc-wrong-plain")
        try copyGoldenStore("a_plain", to: plainDir)
        let attempts: [(TemporaryDirectory, String, CryptKey?)] = [
            (dir, "case_b", CryptKey(Array("WrongKey".utf8))),
            (dir, "case_b", CryptKey(Array("MMKVKey0123456".utf8), aes256: true)),
            (dir, "case_b", nil),
            (plainDir, "case_a", Self.keyB),
        ]
        for (directory, id, key) in attempts {
            let data = fileBytes(directory.file(id))
            let meta = fileBytes(directory.file(id + ".crc"))
            for readOnly in [true, false] {
                let error = #expect(throws: MappedKVError.self) {
                    let store = try MappedKV(
                        id: id, directory: directory.path,
                        configuration: Configuration(isReadOnly: readOnly, cryptKey: key))
                    try store.set("must not land", forKey: "x")
                }
                // With a key that does not decode the records: a wrong key. Without one, the IV in
                // the meta file (MMKV's, random) says the store is encrypted: a missing key.
                let reported: Bool
                switch error {
                case .wrongCryptKey(_, .undecodable)?: reported = key != nil
                case .missingCryptKey?: reported = key == nil
                default: reported = false
                }
                guard reported else {
                    Issue.record(
                        "expected a wrong-key error for \(id) with \(String(describing: key)), got \(String(describing: error))"
                    )
                    continue
                }
                #expect("\(error!)".contains(key == nil ? "no key was given" : "wrong encryption key"))
            }
            #expect(fileBytes(directory.file(id)) == data, "data file of \(id) changed")
            #expect(fileBytes(directory.file(id + ".crc")) == meta, "meta file of \(id) changed")
        }
    }
}

/// The wrong-key plausibility rule on its own: a region whose framing is valid but whose key is not
/// UTF-8 is refused when it was decrypted (noise from a wrong key), accepted when it is plain.
@Suite struct PlausibilityTests {
    func writeStore(_ dir: TemporaryDirectory, region plain: [UInt8], key: CryptKey?) throws {
        var region = plain
        var meta = MetaInfo()
        let iv = [UInt8](repeating: 7, count: 16)
        if let key { try CFBStream(key: key.aesKey, iv: iv).encrypt(&region) }
        _ = meta.update(
            actualSize: UInt32(region.count), crc: CRC32.checksum(region),
            iv: key == nil ? nil : InitializationVector(iv), increasesSequence: true)
        var data = [UInt8](repeating: 0, count: 4096)
        data.replaceSubrange(4..<(4 + region.count), with: region)
        try writeFile(dir.file("s"), data)
        try writeFile(dir.file("s.crc"), meta.serialized + [UInt8](repeating: 0, count: 4096 - 112))
    }

    @Test func aDecryptedNonUTF8KeyIsRefusedAPlainOneIsNot() throws {
        let region: [UInt8] = [0x80, 0x80, 0x80, 0x01, 0x02, 0xFF, 0xFE, 0x01, 0x07]
        let key = try #require(CryptKey(Array("k".utf8)))
        let encrypted = TemporaryDirectory("plausible-enc")
        try writeStore(encrypted, region: region, key: key)
        let error = #expect(throws: MappedKVError.self) {
            _ = try MappedKV(
                id: "s", directory: encrypted.path, configuration: Configuration(isReadOnly: true, cryptKey: key))
        }
        #expect(error == .wrongCryptKey(id: "s", reason: .undecodable(.invalidUTF8)))
        let report = try StoreInspector.inspect(
            location: try StoreLocation(id: "s", directory: encrypted.path),
            dataFile: fileBytes(encrypted.file("s")), metaFile: fileBytes(encrypted.file("s.crc")), cryptKey: key)
        #expect(!report.isSound)

        let plain = TemporaryDirectory("plausible-plain")
        try writeStore(plain, region: region, key: nil)
        let store = try MappedKV(id: "s", directory: plain.path, configuration: Configuration(isReadOnly: true))
        #expect(try store.count == 1)
    }

    /// A plain store written by MMKV's C++ API may hold keys that are not UTF-8. Each is reachable
    /// under the string `allKeys` shows (its UTF-8 repair), keys that repair alike are one key (the
    /// last record wins, as for any key), and a set or remove by that name sticks across a reopen.
    @Test func keysThatAreNotUTF8AreReachableByTheirRepairedName() throws {
        // holder, then "a\xFF" = 7, "a\xFE" = 8 (both repair to "a\u{FFFD}"), "b\xC3" = 9
        let region: [UInt8] = [
            0x00, 0x02, 0x61, 0xFF, 0x01, 0x07, 0x02, 0x61, 0xFE, 0x01, 0x08, 0x02, 0x62, 0xC3, 0x01, 0x09,
        ]
        let dir = TemporaryDirectory("non-utf8-keys")
        try writeStore(dir, region: region, key: nil)
        let a = "a\u{FFFD}"
        let b = "b\u{FFFD}"
        do {
            let store = try MappedKV(id: "s", directory: dir.path)
            #expect(try store.allKeys == [a, b])
            #expect(try store.count == 2)
            #expect(try store.payload(forKey: a) == [0x08])
            #expect(try store.payload(forKey: b) == [0x09])
            // A full write-back keeps the live records' original key bytes and drops the dead one.
            try store.rekey(to: nil)
            let data = try #require(fileBytes(dir.file("s")))
            let used = Int(try store.info().meta.actualSize)
            let records = Array(data[4..<(4 + used)])
            #expect(records.count > 10, "a holder and two records")
            #expect(records.suffix(10).elementsEqual([0x02, 0x61, 0xFE, 0x01, 0x08, 0x02, 0x62, 0xC3, 0x01, 0x09]))
            #expect(try store.allKeys == [a, b])
            #expect(try store.payload(forKey: a) == [0x08])
            try store.set(Int32(5), forKey: a)
            try store.removeValue(forKey: b)
            #expect(try store.allKeys == [a])
        }
        let reopened = try MappedKV(id: "s", directory: dir.path)
        #expect(try reopened.allKeys == [a])
        #expect(try reopened.int32(forKey: a) == 5)
        #expect(try reopened.payload(forKey: b) == nil)
    }

    @Test func aDecryptedHolderLongerThanFiveBytesIsRefused() throws {
        let region: [UInt8] = [0x80, 0x80, 0x80, 0x80, 0x80, 0x01, 0x01, 0x61, 0x01, 0x07]
        let key = try #require(CryptKey(Array("k".utf8)))
        let dir = TemporaryDirectory("plausible-holder")
        try writeStore(dir, region: region, key: key)
        let error = #expect(throws: MappedKVError.self) {
            _ = try MappedKV(
                id: "s", directory: dir.path, configuration: Configuration(isReadOnly: true, cryptKey: key))
        }
        #expect(error == .wrongCryptKey(id: "s", reason: .undecodable(.malformedVarint(offset: 0))))
    }
}
