import CLibCrypto

/// MD5 through libcrypto, used only to name files as MMKV does (never for security).
package enum MD5 {
    /// The 16-byte digest of `bytes`.
    package static func digest(_ bytes: [UInt8]) throws(CryptoFailure) -> [UInt8] {
        var digest = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var length: UInt32 = 0
        let ok = bytes.withUnsafeBytes { input in
            digest.withUnsafeMutableBufferPointer { output in
                EVP_Digest(input.baseAddress, input.count, output.baseAddress, &length, EVP_md5(), nil)
            }
        }
        // EVP_Digest with MD5 fails only if libcrypto cannot allocate a context.
        guard ok == 1 else { throw CryptoFailure("compute an MD5 digest") }
        return Array(digest.prefix(Int(length)))
    }

    /// The digest of `bytes` as 32 lowercase hexadecimal characters.
    package static func hexDigest(_ bytes: [UInt8]) throws(CryptoFailure) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var hex: [UInt8] = []
        hex.reserveCapacity(32)
        for byte in try digest(bytes) {
            hex.append(digits[Int(byte >> 4)])
            hex.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: hex, as: UTF8.self)
    }
}
