import CLibCrypto

/// AES encryption of whole 16-byte blocks (ECB, no padding) through libcrypto's EVP interface.
///
/// CFB128 needs only the forward cipher: each keystream block is the encryption of the previous
/// ciphertext block. The key schedule is computed once, when the cipher is created. Every libcrypto
/// failure is a thrown ``CryptoFailure``; the preconditions are on the callers' byte counts only.
final class AESBlockCipher {
    private let context: OpaquePointer
    private let key: AESKey
    /// A CFB128 context for bulk encryption, made on first use and re-initialized with each IV.
    private var cfbContext: OpaquePointer?

    init(key: AESKey) throws(CryptoFailure) {
        guard let context = EVP_CIPHER_CTX_new() else { throw CryptoFailure("allocate a cipher context") }
        let cipher = key.isAES256 ? EVP_aes_256_ecb() : EVP_aes_128_ecb()
        let ok = key.bytes.withUnsafeBufferPointer { keyBytes in
            EVP_EncryptInit_ex(context, cipher, nil, keyBytes.baseAddress, nil)
        }
        guard ok == 1 else {
            EVP_CIPHER_CTX_free(context)
            throw CryptoFailure("set up AES-\(key.isAES256 ? 256 : 128) with the key")
        }
        EVP_CIPHER_CTX_set_padding(context, 0)
        self.context = context
        self.key = key
    }

    deinit {
        EVP_CIPHER_CTX_free(context)
        if let cfbContext { EVP_CIPHER_CTX_free(cfbContext) }
    }

    /// Encrypts `count` bytes from `input` into `output`, block by block.
    ///
    /// - Precondition: `count` is a multiple of 16 and fits an `Int32` (the package's callers pass
    ///   whole blocks of at most 64 KiB).
    func encryptBlocks(
        _ input: UnsafePointer<UInt8>, _ output: UnsafeMutablePointer<UInt8>, count: Int
    ) throws(CryptoFailure) {
        precondition(count % 16 == 0 && count <= Int(Int32.max))
        // EVP_Cipher skips EVP_EncryptUpdate's buffering layer (a third of its cost per block);
        // with a provider cipher it returns the byte count, with a legacy one 1.
        let result = EVP_Cipher(context, output, input, UInt32(count))
        guard result == Int32(count) || result == 1 else { throw CryptoFailure("encrypt AES blocks") }
    }

    /// Encrypts `count` bytes (a multiple of 16) in CFB128 mode starting from `iv`, in libcrypto
    /// calls of up to 1 GiB rather than one call per block. `input` and `output` may be the same.
    ///
    /// - Precondition: `count` is a multiple of 16.
    func cfbEncrypt(
        iv: UnsafePointer<UInt8>, _ input: UnsafePointer<UInt8>, _ output: UnsafeMutablePointer<UInt8>, count: Int
    ) throws(CryptoFailure) {
        precondition(count % 16 == 0)
        let context: OpaquePointer
        if let existing = cfbContext {
            context = existing
        } else {
            guard let made = EVP_CIPHER_CTX_new() else { throw CryptoFailure("allocate a cipher context") }
            cfbContext = made
            context = made
        }
        let mode = key.isAES256 ? EVP_aes_256_cfb128() : EVP_aes_128_cfb128()
        let ok = key.bytes.withUnsafeBufferPointer { keyBytes in
            EVP_EncryptInit_ex(context, mode, nil, keyBytes.baseAddress, iv)
        }
        guard ok == 1 else { throw CryptoFailure("set up AES-CFB with the key and IV") }
        var done = 0
        while done < count {
            let chunk = min(count - done, 1 << 30)
            var written: Int32 = 0
            let updated = EVP_EncryptUpdate(context, output + done, &written, input + done, Int32(chunk))
            guard updated == 1 && Int(written) == chunk else { throw CryptoFailure("encrypt with AES-CFB") }
            done += chunk
        }
    }
}
