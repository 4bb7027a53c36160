import CLibCrypto

/// AES encryption of whole 16-byte blocks (ECB, no padding) through libcrypto's EVP interface.
///
/// CFB128 needs only the forward cipher: each keystream block is the encryption of the previous
/// ciphertext block. The key schedule is computed once, when the cipher is created.
final class AESBlockCipher {
    private let context: OpaquePointer

    init(key: CryptKey) {
        guard let context = EVP_CIPHER_CTX_new() else {
            fatalError("libcrypto could not allocate a cipher context")
        }
        self.context = context
        let cipher = key.isAES256 ? EVP_aes_256_ecb() : EVP_aes_128_ecb()
        let ok = key.bytes.withUnsafeBufferPointer { keyBytes in
            EVP_EncryptInit_ex(context, cipher, nil, keyBytes.baseAddress, nil)
        }
        precondition(ok == 1, "libcrypto rejected an AES key of \(key.bytes.count) bytes")
        EVP_CIPHER_CTX_set_padding(context, 0)
    }

    deinit { EVP_CIPHER_CTX_free(context) }

    /// Encrypts `count` bytes (a multiple of 16) from `input` into `output`, block by block.
    func encryptBlocks(_ input: UnsafePointer<UInt8>, _ output: UnsafeMutablePointer<UInt8>, count: Int) {
        precondition(count % 16 == 0 && count <= Int(Int32.max))
        var written: Int32 = 0
        let ok = EVP_EncryptUpdate(context, output, &written, input, Int32(count))
        precondition(ok == 1 && Int(written) == count, "AES block encryption failed")
    }
}
