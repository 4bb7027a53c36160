import MappedKVCrypto

// The public face of an encryption key. The crypto layer works with its own `AESKey`; this type
// wraps one so that the key a caller passes is the key every cipher of the store uses, and so that
// no description or log line ever shows key material.

/// An AES key prepared as MMKV prepares it: the key bytes zero-padded or truncated to 16 bytes
/// (AES-128, the default) or 32 bytes (AES-256). There is no key derivation (docs/FORMAT.md section 4).
///
/// The description never shows key material.
public struct CryptKey: Sendable, Equatable, CustomStringConvertible {
    /// The key the ciphers use.
    package let aesKey: AESKey

    /// Prepares `raw` for AES-128, or AES-256 if `aes256`; nil for an empty key, which means "not encrypted".
    public init?(_ raw: [UInt8], aes256: Bool = false) {
        guard !raw.isEmpty else { return nil }
        aesKey = AESKey(padding: raw, aes256: aes256)
    }

    /// The padded key, 16 or 32 bytes.
    public var bytes: [UInt8] { aesKey.bytes }

    /// Whether this is an AES-256 key.
    public var isAES256: Bool { aesKey.isAES256 }

    /// The first 16 bytes of the padded key: MMKV's IV for meta versions below 2.
    package var legacyIV: [UInt8] { aesKey.legacyIV }

    /// The key size, never the key: `CryptKey(AES-128, redacted)`.
    public var description: String { "CryptKey(AES-\(isAES256 ? 256 : 128), redacted)" }
}
