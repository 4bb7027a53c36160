import MappedKVCrypto
import MappedKVFormat

// Where a region's cipher stream starts: the one rule (docs/FORMAT.md section 4) shared by the
// loader, a recovery's scan and the inspector.
extension MetaInfo {
    /// The IV the region under this meta is encrypted from: the meta's own from version 2, else
    /// the key's first 16 bytes (MMKV's legacy IV).
    func regionIV(for key: CryptKey) -> [UInt8] {
        version >= .randomIV ? iv.bytes : key.legacyIV
    }

    /// A cipher stream at the start of the region encrypted under this meta with `key`.
    func regionStream(for key: CryptKey) throws(CryptoFailure) -> CFBStream {
        try CFBStream(key: key.aesKey, iv: regionIV(for: key))
    }
}
