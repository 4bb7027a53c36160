/// An AES key prepared as MMKV prepares it: the key bytes zero-padded or truncated to 16 bytes
/// (AES-128, the default) or 32 bytes (AES-256). There is no key derivation (docs/FORMAT.md section 4).
///
/// The description never shows key material.
public struct CryptKey: Sendable, Equatable, CustomStringConvertible {
    /// The padded key, 16 or 32 bytes.
    public let bytes: [UInt8]

    /// Prepares `raw` for AES-128, or AES-256 if `aes256`; nil for an empty key, which means "not encrypted".
    public init?(_ raw: [UInt8], aes256: Bool = false) {
        guard !raw.isEmpty else { return nil }
        let length = aes256 ? 32 : 16
        bytes = Array((raw + [UInt8](repeating: 0, count: length)).prefix(length))
    }

    /// Whether this is an AES-256 key.
    public var isAES256: Bool { bytes.count == 32 }

    /// The first 16 bytes of the padded key: MMKV's IV for meta versions below 2.
    public var legacyIV: [UInt8] { Array(bytes.prefix(16)) }

    /// The key size, never the key: `CryptKey(AES-128, redacted)`.
    public var description: String { "CryptKey(AES-\(isAES256 ? 256 : 128), redacted)" }
}
