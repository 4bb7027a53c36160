import Foundation
import MappedKVFormat
import Testing

@testable import MappedKV

/// Changing a store's key: plain to encrypted, key to key, encrypted to plain, and adopting a key.
@Suite struct RekeyTests {
    let k1 = CryptKey(Array("first-key".utf8))!
    let k2 = CryptKey(Array("second-key".utf8), aes256: true)!

    func meta(_ dir: TemporaryDirectory) throws -> MetaInfo {
        try MetaInfo(parsing: try #require(fileBytes(dir.file("s.crc"))))
    }

    func fill(_ store: MappedKV) throws -> [String: [UInt8]] {
        for i in 0..<200 { try store.set("secret-value-\(i)", forKey: "key-\(i)") }
        for i in stride(from: 0, to: 200, by: 3) { try store.removeValue(forKey: "key-\(i)") }
        return try contents(of: store)
    }

    func open(_ dir: TemporaryDirectory, _ key: CryptKey?) throws -> MappedKV {
        try MappedKV(id: "s", directory: dir.path, configuration: Configuration(cryptKey: key))
    }

    @Test func plainToKeyToKeyToPlain() throws {
        let dir = TemporaryDirectory("rekey")
        let store = try open(dir, nil)
        let model = try fill(store)
        var sequence = try meta(dir).sequence
        var lastIV = try meta(dir).iv
        for (step, key) in [(1, k1), (2, k2), (3, nil as CryptKey?)] {
            try store.rekey(to: key)
            #expect(try contents(of: store) == model, "step \(step)")
            let now = try meta(dir)
            #expect(now.sequence == sequence + 1, "a rekey is a rewrite: step \(step)")
            if key != nil {
                #expect(now.iv != lastIV && now.version >= .randomIV, "a fresh IV: step \(step)")
                let data = try #require(fileBytes(dir.file("s")))
                #expect(!String(decoding: data, as: UTF8.self).contains("secret-value"), "no plaintext: step \(step)")
                #expect(FileStructure.problems(directory: dir.path, id: "s", key: key).isEmpty)
            } else {
                #expect(FileStructure.problems(directory: dir.path, id: "s").isEmpty)
            }
            sequence = now.sequence
            lastIV = now.iv
            #expect(store.isEncrypted == (key != nil))
            // The files now open with the new key only.
            #expect(try contents(of: try open(dir, key)) == model, "reopen: step \(step)")
            for other in [nil, k1, k2] where other != key {
                #expect(throws: MappedKVError.self, "step \(step) opened with another key") { _ = try open(dir, other) }
            }
        }
        // The instance keeps working after every change.
        try store.set("later", forKey: "after")
        #expect(try open(dir, nil).string(forKey: "after") == "later")
    }

    @Test func adoptingAKeyReloadsWithoutWriting() throws {
        let dir = TemporaryDirectory("adopt")
        let elsewhere = TemporaryDirectory("adopt-elsewhere")
        let writer = try open(dir, k1)
        let model = try fill(writer)
        writer.close()
        // The same store rekeyed by someone else: a copy, rekeyed, then copied over the files in place.
        for name in ["s", "s.crc"] { try writeFile(elsewhere.file(name), fileBytes(dir.file(name)) ?? []) }
        let other = try open(elsewhere, k1)
        try other.rekey(to: k2)
        other.close()
        let reader = try MappedKV(
            id: "s", directory: dir.path, configuration: Configuration(isReadOnly: true, cryptKey: k1))
        for name in ["s", "s.crc"] {
            let handle = try #require(FileHandle(forWritingAtPath: dir.file(name)))
            handle.write(Data(fileBytes(elsewhere.file(name)) ?? []))
            try handle.truncate(atOffset: handle.offsetInFile)
            try handle.close()
        }
        let data = fileBytes(dir.file("s"))
        let meta = fileBytes(dir.file("s.crc"))
        #expect(throws: MappedKVError.self) { try reader.adoptCryptKey(self.k1) }
        #expect(try contents(of: reader) == model, "a failed adopt keeps the loaded state")
        try reader.adoptCryptKey(k2)
        #expect(try contents(of: reader) == model)
        #expect(reader.isEncrypted)
        #expect(fileBytes(dir.file("s")) == data && fileBytes(dir.file("s.crc")) == meta, "adopting writes nothing")
    }

    @Test func rekeyOfAnEmptyStoreStoresTheNewIV() throws {
        let dir = TemporaryDirectory("rekey-empty")
        let store = try open(dir, nil)
        try store.rekey(to: k1)
        try store.set(true, forKey: "flag")
        store.close()
        #expect(try open(dir, k1).bool(forKey: "flag") == true)
    }
}
