/// AES in CFB mode with 128-bit feedback over one continuous stream, as MMKV encrypts its data region.
///
/// The state is OpenSSL's `CRYPTO_cfb128` state: a 16-byte register and a position `num` within
/// the current block. Bytes may be processed in any chunking; encryption and decryption advance
/// the same state, so a stream that decrypted a region can go on to encrypt appends after it.
/// A stream can also be placed at any offset of an existing ciphertext without decrypting it.
package final class CFBStream {
    private let cipher: AESBlockCipher
    /// Holds the current keystream block, overwritten byte by byte with ciphertext as it is produced.
    /// 16 bytes owned by this stream (a fixed buffer: no array checks on the per-byte path).
    private let register: UnsafeMutablePointer<UInt8>
    // A stream is used by one thread at a time and never reentrantly. Its two counters are
    // private, so that release builds see every access and drop the dynamic exclusivity checks
    // (three per call, a third of an append's encryption cost when they were paid).
    /// How many bytes of the current block have been used (0 to 15).
    private var num: Int
    /// The stream offset of the next byte.
    private var streamOffset: Int

    /// The stream offset of the next byte.
    package var offset: Int { streamOffset }

    /// A stream at offset 0 with `iv`.
    ///
    /// - Precondition: `iv` is 16 bytes (the package's callers take it from a meta file's IV field,
    ///   a key's first 16 bytes or 16 random bytes).
    /// - Throws: ``CryptoFailure`` if libcrypto cannot set up the cipher.
    package init(key: AESKey, iv: [UInt8]) throws(CryptoFailure) {
        precondition(iv.count == 16, "an AES-CFB IV is 16 bytes")
        cipher = try AESBlockCipher(key: key)
        register = UnsafeMutablePointer<UInt8>.allocate(capacity: 16)
        register.initialize(from: iv, count: 16)
        num = 0
        streamOffset = 0
    }

    /// A stream placed at `ciphertext.count`, the end of an existing ciphertext that began at offset 0 with `iv`.
    ///
    /// Only the last one or two blocks are read: keystream block k is the encryption of
    /// ciphertext block k - 1 (the IV for block 0).
    package convenience init(
        key: AESKey, iv: [UInt8], continuingAfter ciphertext: UnsafeRawBufferPointer
    ) throws(CryptoFailure) {
        try self.init(key: key, iv: iv)
        let position = ciphertext.count
        let blockStart = position / 16 * 16
        if blockStart >= 16 {
            UnsafeMutableRawPointer(register).copyMemory(from: ciphertext.baseAddress! + blockStart - 16, byteCount: 16)
        }
        streamOffset = blockStart
        // Feed the partial block's existing ciphertext through the decryptor: that leaves exactly the
        // state an encryptor would have after producing it.
        if position > blockStart {
            var tail = Array(ciphertext[blockStart..<position])
            try decrypt(&tail)
        }
    }

    deinit { register.deallocate() }

    /// An independent copy of this stream's state.
    package func copy() -> CFBStream {
        let twin = CFBStream(cipher: cipher, register: register, num: num, offset: offset)
        return twin
    }

    private init(cipher: AESBlockCipher, register: UnsafeMutablePointer<UInt8>, num: Int, offset: Int) {
        self.cipher = cipher
        self.register = UnsafeMutablePointer<UInt8>.allocate(capacity: 16)
        self.register.initialize(from: register, count: 16)
        self.num = num
        self.streamOffset = offset
    }

    /// Encrypts `bytes` in place, continuing the stream.
    ///
    /// On a thrown ``CryptoFailure`` the bytes and the stream's state are unspecified: the stream
    /// must not be used again.
    package func encrypt(_ bytes: UnsafeMutableRawBufferPointer) throws(CryptoFailure) {
        try process(UnsafeRawBufferPointer(bytes), into: bytes, encrypting: true)
    }

    /// Encrypts `source` into `destination`, continuing the stream; the destination never holds
    /// the plaintext, even for a moment.
    ///
    /// - Precondition: `destination` is at least as long as `source`.
    package func encrypt(
        _ source: UnsafeRawBufferPointer, into destination: UnsafeMutableRawBufferPointer
    ) throws(CryptoFailure) {
        precondition(destination.count >= source.count, "encryption destination too small")
        try process(source, into: destination, encrypting: true)
    }

    /// Decrypts `bytes` in place, continuing the stream.
    package func decrypt(_ bytes: UnsafeMutableRawBufferPointer) throws(CryptoFailure) {
        try process(UnsafeRawBufferPointer(bytes), into: bytes, encrypting: false)
    }

    /// Encrypts `bytes[start...]` in place, continuing the stream.
    package func encrypt(_ bytes: inout [UInt8], from start: Int = 0) throws(CryptoFailure) {
        try inPlace(&bytes, from: start, encrypting: true)
    }

    /// Decrypts `bytes[start...]` in place, continuing the stream.
    package func decrypt(_ bytes: inout [UInt8], from start: Int = 0) throws(CryptoFailure) {
        try inPlace(&bytes, from: start, encrypting: false)
    }

    private func inPlace(_ bytes: inout [UInt8], from start: Int, encrypting: Bool) throws(CryptoFailure) {
        var failure: CryptoFailure?
        bytes.withUnsafeMutableBytes { all in
            let part = UnsafeMutableRawBufferPointer(rebasing: all[start...])
            do throws(CryptoFailure) {
                try process(UnsafeRawBufferPointer(part), into: part, encrypting: encrypting)
            } catch {
                failure = error
            }
        }
        if let failure { throw failure }
    }

    private func process(
        _ source: UnsafeRawBufferPointer, into destination: UnsafeMutableRawBufferPointer, encrypting: Bool
    ) throws(CryptoFailure) {
        guard let input = source.baseAddress?.assumingMemoryBound(to: UInt8.self),
            let data = destination.baseAddress?.assumingMemoryBound(to: UInt8.self), !source.isEmpty
        else { return }
        let count = source.count
        let reg = register
        var index = 0
        // The position within the block lives in a local for the loop, not in the object.
        var position = num
        // Long runs of whole blocks go to libcrypto in bulk; short appends take the loop below.
        if position == 0 && count >= Self.bulkThreshold {
            let whole = count / 16 * 16
            if encrypting {
                try cipher.cfbEncrypt(iv: reg, input, data, count: whole)
                reg.update(from: data + whole - 16, count: 16)
            } else {
                try decryptWholeBlocks(input, data, count: whole, register: reg)
            }
            index = whole
        }
        while index < count {
            if position == 0 {
                // A new block: its keystream is the encryption of the previous ciphertext block.
                try cipher.encryptBlocks(reg, reg, count: 16)
            }
            // The rest of this block, or of the input: out = in ^ keystream, and the register
            // takes the ciphertext byte in place of the keystream byte it used.
            let span = min(16 - position, count - index)
            Self.xor(input + index, into: data + index, keystream: reg + position, count: span, encrypting: encrypting)
            index += span
            position = (position + span) & 15
        }
        num = position
        streamOffset += count
    }

    /// XORs `count` bytes (at most 16) of `input` with the keystream into `output` (which may be
    /// `input`), eight bytes at a time, and stores the ciphertext bytes into the keystream's place.
    @inline(__always)
    private static func xor(
        _ input: UnsafePointer<UInt8>, into output: UnsafeMutablePointer<UInt8>, keystream: UnsafeMutablePointer<UInt8>,
        count: Int, encrypting: Bool
    ) {
        var byte = 0
        while count - byte >= 8 {
            let plain = UnsafeRawPointer(input + byte).loadUnaligned(as: UInt64.self)
            let mixed = plain ^ UnsafeRawPointer(keystream + byte).loadUnaligned(as: UInt64.self)
            UnsafeMutableRawPointer(output + byte).storeBytes(of: mixed, as: UInt64.self)
            UnsafeMutableRawPointer(keystream + byte).storeBytes(of: encrypting ? mixed : plain, as: UInt64.self)
            byte += 8
        }
        if count - byte >= 4 {
            let plain = UnsafeRawPointer(input + byte).loadUnaligned(as: UInt32.self)
            let mixed = plain ^ UnsafeRawPointer(keystream + byte).loadUnaligned(as: UInt32.self)
            UnsafeMutableRawPointer(output + byte).storeBytes(of: mixed, as: UInt32.self)
            UnsafeMutableRawPointer(keystream + byte).storeBytes(of: encrypting ? mixed : plain, as: UInt32.self)
            byte += 4
        }
        while byte < count {
            let inputByte = input[byte]
            let mixed = inputByte ^ keystream[byte]
            output[byte] = mixed
            keystream[byte] = encrypting ? mixed : inputByte
            byte += 1
        }
    }

    /// Below this many bytes, the per-block loop is as fast as a bulk call.
    static let bulkThreshold = 256

    /// Decrypts `count` bytes (a multiple of 16) at a block boundary. Unlike encryption, CFB
    /// decryption needs no chaining: keystream block k is the encryption of ciphertext block
    /// k - 1 (of the register for k = 0), all known in advance, so whole chunks of keystream come
    /// from one ECB call that libcrypto pipelines. Leaves the last ciphertext block in the register.
    private func decryptWholeBlocks(
        _ input: UnsafePointer<UInt8>, _ data: UnsafeMutablePointer<UInt8>, count: Int,
        register reg: UnsafeMutablePointer<UInt8>
    ) throws(CryptoFailure) {
        let chunkBytes = 64 * 1024
        let keystream = UnsafeMutablePointer<UInt8>.allocate(capacity: min(count, chunkBytes))
        defer { keystream.deallocate() }
        var done = 0
        while done < count {
            let chunk = min(count - done, chunkBytes)
            // Keystream before any output: with input == data, the output overwrites the ciphertext.
            try cipher.encryptBlocks(reg, keystream, count: 16)
            if chunk > 16 { try cipher.encryptBlocks(input + done, keystream + 16, count: chunk - 16) }
            reg.update(from: input + done + chunk - 16, count: 16)
            // Whole words (the chunk is a multiple of 16 bytes); the input may be the output.
            for word in stride(from: 0, to: chunk, by: 8) {
                let cipherWord = UnsafeRawPointer(input + done + word).loadUnaligned(as: UInt64.self)
                let keyWord = UnsafeRawPointer(keystream + word).loadUnaligned(as: UInt64.self)
                UnsafeMutableRawPointer(data + done + word).storeBytes(of: cipherWord ^ keyWord, as: UInt64.self)
            }
            done += chunk
        }
    }
}
