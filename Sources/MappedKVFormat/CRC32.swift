import CZlib

/// zlib's CRC-32 (ISO-HDLC, reflected polynomial 0xEDB88320), as MMKV computes over the data region.
public enum CRC32 {
    /// Continues `crc` over `bytes`; start with 0. The empty range leaves the value unchanged.
    @inlinable
    public static func update(_ crc: UInt32, _ bytes: UnsafeRawBufferPointer) -> UInt32 {
        guard let base = bytes.baseAddress, !bytes.isEmpty else { return crc }
        let result = crc32_z(UInt(crc), base.assumingMemoryBound(to: Bytef.self), bytes.count)
        return UInt32(truncatingIfNeeded: result)
    }

    /// The CRC-32 of `bytes`.
    public static func checksum(_ bytes: some Sequence<UInt8>) -> UInt32 {
        let array = Array(bytes)
        return array.withUnsafeBytes { update(0, $0) }
    }
}
