import Foundation
import MappedKVCrypto
import MappedKVFormat
import Testing

/// Where the package's Vectors folder is.
private let vectors: String = {
    var url = URL(fileURLWithPath: #filePath)
    while url.path != "/" {
        url.deleteLastPathComponent()
        if FileManager.default.fileExists(atPath: url.appendingPathComponent("Vectors/crypto").path) {
            return url.appendingPathComponent("Vectors").path
        }
    }
    fatalError("Vectors folder not found")
}()

private func bytes(_ hex: Substring) -> [UInt8] {
    var out: [UInt8] = []
    var index = hex.startIndex
    while index < hex.endIndex {
        let next = hex.index(index, offsetBy: 2)
        out.append(UInt8(hex[index..<next], radix: 16)!)
        index = next
    }
    return out
}

struct NISTVector: CustomTestStringConvertible, Sendable {
    var section: String
    var key: [UInt8], iv: [UInt8], plaintext: [UInt8], ciphertext: [UInt8]
    var testDescription: String { section }
    var aesKey: AESKey { AESKey(padding: key, aes256: key.count == 32) }
}

private let nistVectors: [NISTVector] = {
    let text = try! String(contentsOfFile: vectors + "/crypto/nist-sp800-38a-cfb128.txt", encoding: .utf8)
    return text.split(separator: "\n").filter { !$0.hasPrefix("#") }.map { line in
        let f = line.split(separator: "\t")
        return NISTVector(
            section: String(f[0]), key: bytes(f[2]), iv: bytes(f[3]), plaintext: bytes(f[4]), ciphertext: bytes(f[5]))
    }
}()

/// Runs `input` through `stream` in chunks of `size`.
private func run(_ stream: CFBStream, _ input: [UInt8], chunk size: Int, encrypting: Bool) throws -> [UInt8] {
    var data = input
    try data.withUnsafeMutableBytes { all in
        var start = 0
        while start < all.count {
            let end = min(start + size, all.count)
            let part = UnsafeMutableRawBufferPointer(rebasing: all[start..<end])
            try encrypting ? stream.encrypt(part) : stream.decrypt(part)
            start = end
        }
    }
    return data
}

@Suite struct CFBStreamTests {
    @Test func theVectorFileHoldsAllFourCases() {
        #expect(nistVectors.map(\.section) == ["F.3.13", "F.3.14", "F.3.17", "F.3.18"])
    }

    @Test(arguments: nistVectors)
    func encryptsAndDecryptsInEveryChunking(vector: NISTVector) throws {
        for size in 1...17 {
            let stream = try CFBStream(key: vector.aesKey, iv: vector.iv)
            #expect(
                try run(stream, vector.plaintext, chunk: size, encrypting: true) == vector.ciphertext, "chunk \(size)")
            #expect(stream.offset == vector.plaintext.count)
            let back = try CFBStream(key: vector.aesKey, iv: vector.iv)
            #expect(
                try run(back, vector.ciphertext, chunk: size, encrypting: false) == vector.plaintext, "chunk \(size)")
        }
    }

    @Test(arguments: nistVectors)
    func continuesFromEveryOffsetOfAnExistingCiphertext(vector: NISTVector) throws {
        for start in 0...vector.ciphertext.count {
            let prefix = Array(vector.ciphertext.prefix(start))
            let stream = try prefix.withUnsafeBytes {
                try CFBStream(key: vector.aesKey, iv: vector.iv, continuingAfter: $0)
            }
            #expect(stream.offset == start)
            let decryptor = stream.copy()
            for size in [1, 5, 16, 17] {
                let enc = stream.copy()
                #expect(
                    try run(enc, Array(vector.plaintext[start...]), chunk: size, encrypting: true)
                        == Array(vector.ciphertext[start...]),
                    "start \(start) chunk \(size)")
            }
            #expect(
                try run(decryptor, Array(vector.ciphertext[start...]), chunk: 7, encrypting: false)
                    == Array(vector.plaintext[start...]),
                "start \(start)")
        }
    }

    /// Long inputs go to libcrypto in bulk (CFB for encryption, pipelined ECB keystream for
    /// decryption); they must give exactly what the block-by-block loop gives, from any offset,
    /// across the 64 KiB chunks of the decryptor, and into a separate destination.
    @Test(arguments: [false, true])
    func bulkCallsMatchTheBlockLoop(aes256: Bool) throws {
        let key = AESKey(padding: Array("bulk-key".utf8), aes256: aes256)
        let iv = (0..<16).map { UInt8($0 * 7 + 3) }
        var state: UInt64 = 0x1234_5678
        let plain = (0..<200_003).map { _ -> UInt8 in
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return UInt8(truncatingIfNeeded: state >> 33)
        }
        // Chunks of 13 bytes never reach the bulk threshold: the reference.
        let cipher = try run(try CFBStream(key: key, iv: iv), plain, chunk: 13, encrypting: true)
        #expect(try run(try CFBStream(key: key, iv: iv), cipher, chunk: 13, encrypting: false) == plain)
        for split in [0, 1, 15, 16, 17, 255, 256, 1_000, 65_536 + 5] {
            let encryptor = try CFBStream(key: key, iv: iv)
            var head = try run(encryptor, Array(plain[..<split]), chunk: 13, encrypting: true)
            head += try run(encryptor, Array(plain[split...]), chunk: plain.count, encrypting: true)
            #expect(head == cipher, "encrypting in bulk after \(split) bytes")
            let decryptor = try CFBStream(key: key, iv: iv)
            var back = try run(decryptor, Array(cipher[..<split]), chunk: 13, encrypting: false)
            back += try run(decryptor, Array(cipher[split...]), chunk: cipher.count, encrypting: false)
            #expect(back == plain, "decrypting in bulk after \(split) bytes")
            // Both streams go on as one: the next short append matches too.
            let nextEncrypted = try run(encryptor, [1, 2, 3], chunk: 3, encrypting: true)
            #expect(nextEncrypted == (try run(decryptor, [1, 2, 3], chunk: 3, encrypting: true)))
        }
        var into = [UInt8](repeating: 0, count: plain.count)
        try plain.withUnsafeBytes { source in
            try into.withUnsafeMutableBytes { try CFBStream(key: key, iv: iv).encrypt(source, into: $0) }
        }
        #expect(into == cipher)
    }

    @Test func decryptingThenEncryptingContinuesOneStream() throws {
        // A load decrypts the region, then appends encrypt after it with the same state.
        let vector = nistVectors[0]
        for split in 0...vector.plaintext.count {
            let stream = try CFBStream(key: vector.aesKey, iv: vector.iv)
            let head = try run(stream, Array(vector.ciphertext.prefix(split)), chunk: 3, encrypting: false)
            let tail = try run(stream, Array(vector.plaintext[split...]), chunk: 5, encrypting: true)
            #expect(head == Array(vector.plaintext.prefix(split)))
            #expect(tail == Array(vector.ciphertext[split...]), "split \(split)")
        }
    }

    @Test func aWrongKeyOrIVGivesOtherBytes() throws {
        let vector = nistVectors[0]
        var otherKey = vector.key
        otherKey[0] ^= 1
        let wrongKey = try run(
            try CFBStream(key: AESKey(padding: otherKey, aes256: false), iv: vector.iv), vector.ciphertext, chunk: 64,
            encrypting: false)
        #expect(wrongKey != vector.plaintext)
        var otherIV = vector.iv
        otherIV[15] ^= 1
        let wrongIV = try run(
            try CFBStream(key: vector.aesKey, iv: otherIV), vector.ciphertext, chunk: 64, encrypting: false)
        #expect(Array(wrongIV.prefix(16)) != Array(vector.plaintext.prefix(16)))
        #expect(
            Array(wrongIV.suffix(32)) == Array(vector.plaintext.suffix(32)), "CFB self-synchronizes after one block")
    }
}

/// The encrypted stores MMKV 2.4.2 wrote decrypt, with the meta IV, to their expected contents.
@Suite struct MMKVEncryptedVectorTests {
    @Test(arguments: [("b_crypt", "case_b", "MMKVKey0123456"), ("b16_crypt16", "case_b16", "MMKVKey012345678")])
    func decryptsToTheExpectedRecords(caseName: String, id: String, key: String) throws {
        let root = "\(vectors)/mmkv-2.4.2/\(caseName)"
        let data = [UInt8](try Data(contentsOf: URL(fileURLWithPath: "\(root)/root/\(id)")))
        let meta = try MetaInfo(parsing: [UInt8](try Data(contentsOf: URL(fileURLWithPath: "\(root)/root/\(id).crc"))))
        #expect(meta.version >= .randomIV)
        var region = Array(data[4..<(4 + Int(meta.actualSize))])
        #expect(CRC32.checksum(region) == meta.crcDigest, "the CRC covers the ciphertext")
        let stream = try CFBStream(key: AESKey(padding: Array(key.utf8), aes256: false), iv: meta.iv.bytes)
        try stream.decrypt(&region)
        var live: [String: String] = [:]
        let summary = region.withUnsafeBytes { plain in
            RecordDecoder.decode(plain, skipsHolder: true) { record in
                let name = String(decoding: plain[record.keyRange], as: UTF8.self)
                live[name] =
                    record.isDeletion ? nil : plain[record.valueRange].map { String(format: "%02x", $0) }.joined()
            }
        }
        #expect(summary.isComplete)
        let expected = try String(contentsOfFile: "\(root)/\(id).expect", encoding: .utf8)
            .split(separator: "\n").filter { !$0.hasPrefix("#") }
            .reduce(into: [String: String]()) { result, line in
                let parts = line.split(separator: "\t")
                result[String(parts[0])] = String(parts[1])
            }
        #expect(live == expected)
    }

    @Test func aWrongKeyDoesNotDecodeTheStore() throws {
        let root = "\(vectors)/mmkv-2.4.2/b_crypt/root"
        let data = [UInt8](try Data(contentsOf: URL(fileURLWithPath: "\(root)/case_b")))
        let meta = try MetaInfo(parsing: [UInt8](try Data(contentsOf: URL(fileURLWithPath: "\(root)/case_b.crc"))))
        var region = Array(data[4..<(4 + Int(meta.actualSize))])
        let stream = try CFBStream(key: AESKey(padding: Array("WrongKey".utf8), aes256: false), iv: meta.iv.bytes)
        try stream.decrypt(&region)
        var keys: [String] = []
        let summary = region.withUnsafeBytes { plain in
            RecordDecoder.decode(plain, skipsHolder: true) {
                keys.append(String(decoding: plain[$0.keyRange], as: UTF8.self))
            }
        }
        #expect(!summary.isComplete || keys.sorted() != ["b", "by", "d", "f", "i32", "i64", "s", "u32", "u64"])
    }
}
