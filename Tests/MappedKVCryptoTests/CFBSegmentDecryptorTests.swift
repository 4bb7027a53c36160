import MappedKVCrypto
import Testing

/// Any block-aligned part of a stream decrypts from the ciphertext alone to what decrypting the
/// whole stream gives (the reads of docs/FORMAT.md 12.6).
@Suite("CFB segments")
struct CFBSegmentDecryptorTests {
    @Test("random parts of random streams match the whole stream's decryption", arguments: [false, true])
    func partsMatchTheWhole(aes256: Bool) throws {
        var state: UInt64 = aes256 ? 256 : 128
        func next() -> UInt64 {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return state >> 11
        }
        for round in 0..<40 {
            let key = AESKey(padding: (0..<32).map { _ in UInt8(truncatingIfNeeded: next()) }, aes256: aes256)
            let iv = (0..<16).map { _ in UInt8(truncatingIfNeeded: next()) }
            let plaintext = (0..<Int(next() % 20_000 + 1)).map { _ in UInt8(truncatingIfNeeded: next()) }
            var ciphertext = plaintext
            try CFBStream(key: key, iv: iv).encrypt(&ciphertext)
            let decryptor = try CFBSegmentDecryptor(key: key, iv: iv)
            for _ in 0..<20 {
                let start = Int(next() % UInt64(plaintext.count)) / 16 * 16
                let end = start + Int(next() % UInt64(plaintext.count - start + 1))
                var part = [UInt8](repeating: 0, count: end - start)
                try ciphertext.withUnsafeBytes { stream in
                    try part.withUnsafeMutableBytes { output in
                        if let base = output.baseAddress {
                            try decryptor.decrypt(stream, range: start..<end, into: base)
                        }
                    }
                }
                #expect(
                    part == Array(plaintext[start..<end]), "round \(round): \(start)..<\(end) of \(plaintext.count)")
            }
        }
    }
}
