// An AES key is exactly 16 or 32 bytes: the only constructor pads or truncates to one of the two
// lengths, so every cipher made from a key gets a length libcrypto accepts.

/// An AES-128 or AES-256 key, prepared as MMKV prepares one: the given bytes zero-padded or truncated
/// to 16 or 32 bytes. There is no key derivation (docs/FORMAT.md section 4).
package struct AESKey: Sendable, Equatable {
    /// The padded key, 16 or 32 bytes.
    package let bytes: [UInt8]

    /// Pads or truncates `raw` to 16 bytes, or to 32 if `aes256`.
    package init(padding raw: [UInt8], aes256: Bool) {
        let length = aes256 ? 32 : 16
        bytes = Array((raw + [UInt8](repeating: 0, count: length)).prefix(length))
    }

    /// Whether this is an AES-256 key.
    package var isAES256: Bool { bytes.count == 32 }

    /// The first 16 bytes of the key: MMKV's IV for meta versions below 2.
    package var legacyIV: [UInt8] { Array(bytes.prefix(16)) }
}
