import MappedKV
import MappedKVCrypto
import MappedKVFormat

/// Turns a plain-text data region into one the meta vouches for, so that mutated records get past
/// the CRC check and reach the decoder (random bytes almost never carry a matching CRC).
///
/// In the data file (header and region, as the input gives it) the region is encrypted under the
/// key with the IV the meta selects (its own from version 2, else the key's first 16 bytes), the
/// meta CRC is set to the CRC of the whole stored region, and the last-confirmed CRC to the CRC of
/// the last-confirmed size when that fits. With `setsUsedSize`, the used size is set to the whole
/// region too (in the meta from version 3, in the header below it); without, the meta's own size
/// stays, so it may end before the CRC does (an interrupted append) or past the file.
struct RegionSealer {
    var key: CryptKey?
    var setsUsedSize: Bool

    func seal(meta: inout [UInt8], data: inout [UInt8]) {
        precondition(meta.count >= MetaInfo.size, "the sealer takes a whole meta struct")
        if data.count < 4 { data += [UInt8](repeating: 0, count: 4 - data.count) }
        let version = Self.load(meta, at: MetaInfo.Offset.version)
        var region = Array(data[4...])
        if let key {
            let iv =
                version >= MetaVersion.randomIV.rawValue
                ? Array(meta[MetaInfo.Offset.iv..<(MetaInfo.Offset.iv + 16)]) : key.legacyIV
            do { try CFBStream(key: key.aesKey, iv: iv).encrypt(&region) } catch {
                harnessFailure("encrypting a region: \(error)")
            }
            data.replaceSubrange(4..., with: region)
        }
        let crc = region.withUnsafeBytes { CRC32.update(0, $0) }
        Self.store(crc, in: &meta, at: MetaInfo.Offset.crcDigest)
        let lastSize = Int(Self.load(meta, at: MetaInfo.Offset.lastConfirmedActualSize))
        if lastSize <= region.count {
            let lastCRC = region.withUnsafeBytes { CRC32.update(0, UnsafeRawBufferPointer(rebasing: $0[..<lastSize])) }
            Self.store(lastCRC, in: &meta, at: MetaInfo.Offset.lastConfirmedCRC)
        }
        guard setsUsedSize else { return }
        let size = UInt32(truncatingIfNeeded: region.count)
        if version >= MetaVersion.actualSize.rawValue {
            Self.store(size, in: &meta, at: MetaInfo.Offset.actualSize)
        } else {
            Self.store(size, in: &data, at: 0)
        }
    }

    static func load(_ bytes: [UInt8], at offset: Int) -> UInt32 {
        (0..<4).reduce(UInt32(0)) { $0 | UInt32(bytes[offset + $1]) << (8 * $1) }
    }

    static func store(_ value: UInt32, in bytes: inout [UInt8], at offset: Int) {
        for index in 0..<4 { bytes[offset + index] = UInt8(truncatingIfNeeded: value >> (8 * index)) }
    }
}
