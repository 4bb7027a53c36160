import CLibCrypto

/// AES encryption of whole 16-byte blocks (ECB, no padding) through libcrypto's EVP interface.
///
/// CFB128 needs only the forward cipher: each keystream block is the encryption of the previous
/// ciphertext block. The key schedule is computed once, when the cipher is created.
final class AESBlockCipher {
    private let context: OpaquePointer
    private let key: AESKey
    /// A CFB128 context for bulk encryption, made on first use and re-initialized with each IV.
    private var cfbContext: OpaquePointer?

    init(key: AESKey) {
        guard let context = EVP_CIPHER_CTX_new() else {
            fatalError("libcrypto could not allocate a cipher context")
        }
        self.context = context
        self.key = key
        let cipher = key.isAES256 ? EVP_aes_256_ecb() : EVP_aes_128_ecb()
        let ok = key.bytes.withUnsafeBufferPointer { keyBytes in
            EVP_EncryptInit_ex(context, cipher, nil, keyBytes.baseAddress, nil)
        }
        precondition(ok == 1, "libcrypto rejected an AES key of \(key.bytes.count) bytes")
        EVP_CIPHER_CTX_set_padding(context, 0)
    }

    deinit {
        EVP_CIPHER_CTX_free(context)
        if let cfbContext { EVP_CIPHER_CTX_free(cfbContext) }
    }

    /// Encrypts `count` bytes (a multiple of 16) from `input` into `output`, block by block.
    func encryptBlocks(_ input: UnsafePointer<UInt8>, _ output: UnsafeMutablePointer<UInt8>, count: Int) {
        precondition(count % 16 == 0 && count <= Int(Int32.max))
        // EVP_Cipher skips EVP_EncryptUpdate's buffering layer (a third of its cost per block);
        // with a provider cipher it returns the byte count, with a legacy one 1.
        let result = EVP_Cipher(context, output, input, UInt32(count))
        precondition(result == Int32(count) || result == 1, "AES block encryption failed")
    }

    /// Encrypts `count` bytes (a multiple of 16) in CFB128 mode starting from `iv`, in libcrypto
    /// calls of up to 1 GiB rather than one call per block. `input` and `output` may be the same.
    func cfbEncrypt(
        iv: UnsafePointer<UInt8>, _ input: UnsafePointer<UInt8>, _ output: UnsafeMutablePointer<UInt8>, count: Int
    ) {
        precondition(count % 16 == 0)
        let context: OpaquePointer
        if let existing = cfbContext {
            context = existing
        } else {
            guard let made = EVP_CIPHER_CTX_new() else { fatalError("libcrypto could not allocate a cipher context") }
            cfbContext = made
            context = made
        }
        let mode = key.isAES256 ? EVP_aes_256_cfb128() : EVP_aes_128_cfb128()
        let ok = key.bytes.withUnsafeBufferPointer { keyBytes in
            EVP_EncryptInit_ex(context, mode, nil, keyBytes.baseAddress, iv)
        }
        precondition(ok == 1, "libcrypto rejected the CFB key or IV")
        var done = 0
        while done < count {
            let chunk = min(count - done, 1 << 30)
            var written: Int32 = 0
            let updated = EVP_EncryptUpdate(context, output + done, &written, input + done, Int32(chunk))
            precondition(updated == 1 && Int(written) == chunk, "AES-CFB encryption failed")
            done += chunk
        }
    }
}
