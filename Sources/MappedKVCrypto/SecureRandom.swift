import CLibCrypto

/// Cryptographically secure random bytes from libcrypto (`RAND_bytes`).
package enum SecureRandom {
    /// `count` random bytes.
    package static func bytes(_ count: Int) throws(CryptoFailure) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: count)
        let ok = bytes.withUnsafeMutableBufferPointer { RAND_bytes($0.baseAddress, Int32(count)) }
        // RAND_bytes fails only if the system's entropy source is unusable: the caller must not
        // go on with predictable bytes, and gets an error instead.
        guard ok == 1 else { throw CryptoFailure("produce random bytes") }
        return bytes
    }
}
