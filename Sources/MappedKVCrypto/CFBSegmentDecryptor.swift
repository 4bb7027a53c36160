/// Decrypts any part of one AES-CFB-128 stream, as ``CFBStream`` writes it, from the ciphertext
/// alone.
///
/// Keystream block k is the encryption of ciphertext block k - 1 (of the IV for block 0), so a
/// part that starts at a block boundary needs only the ciphertext block before it, and its whole
/// keystream comes from one ECB call over ciphertext already in hand. This is how a process reads
/// one record of an encrypted region without decrypting the region before it.
package final class CFBSegmentDecryptor {
    private let cipher: AESBlockCipher
    private let iv: [UInt8]
    /// Keystream for up to ``chunkBytes`` bytes (one allocation for the decryptor's life).
    private let keystream: UnsafeMutablePointer<UInt8>
    private static let chunkBytes = 4_096

    /// A decryptor of the stream that begins with `iv` under `key`.
    ///
    /// - Precondition: `iv` is 16 bytes.
    /// - Throws: ``CryptoFailure`` if libcrypto cannot set up the cipher.
    package init(key: AESKey, iv: [UInt8]) throws(CryptoFailure) {
        precondition(iv.count == 16, "an AES-CFB IV is 16 bytes")
        cipher = try AESBlockCipher(key: key)
        self.iv = iv
        keystream = .allocate(capacity: Self.chunkBytes)
    }

    deinit { keystream.deallocate() }

    /// Decrypts `stream[range]` into `destination`, which receives `range.count` bytes; `stream`
    /// is the ciphertext from the stream's first byte.
    ///
    /// - Precondition: `range` lies within `stream` and starts at a multiple of 16.
    package func decrypt(
        _ stream: UnsafeRawBufferPointer, range: Range<Int>, into destination: UnsafeMutableRawPointer
    ) throws(CryptoFailure) {
        precondition(range.lowerBound % 16 == 0 && range.lowerBound >= 0 && range.upperBound <= stream.count)
        guard !range.isEmpty, let base = stream.baseAddress?.assumingMemoryBound(to: UInt8.self) else { return }
        var start = range.lowerBound
        while start < range.upperBound {
            let count = min(range.upperBound - start, Self.chunkBytes)
            let blocks = (count + 15) / 16
            if start == 0 {
                try iv.withUnsafeBufferPointer { (iv) throws(CryptoFailure) in
                    try cipher.encryptBlocks(iv.baseAddress!, keystream, count: 16)
                }
                if blocks > 1 { try cipher.encryptBlocks(base, keystream + 16, count: (blocks - 1) * 16) }
            } else {
                // Blocks start - 16 up to the last whole block before the part's end.
                try cipher.encryptBlocks(base + start - 16, keystream, count: blocks * 16)
            }
            let output = destination + (start - range.lowerBound)
            var byte = 0
            while count - byte >= 8 {
                let cipherWord = UnsafeRawPointer(base + start + byte).loadUnaligned(as: UInt64.self)
                let keyWord = UnsafeRawPointer(keystream + byte).loadUnaligned(as: UInt64.self)
                (output + byte).storeBytes(of: cipherWord ^ keyWord, as: UInt64.self)
                byte += 8
            }
            while byte < count {
                (output + byte).storeBytes(of: base[start + byte] ^ keystream[byte], as: UInt8.self)
                byte += 1
            }
            start += count
        }
    }
}
