import CCRC32
import CZlib

/// zlib's CRC-32 (ISO-HDLC, reflected polynomial 0xEDB88320), as MMKV computes over the data region.
///
/// Buffers of at least `foldThreshold` bytes go through CCRC32's carry-less multiplication folding when
/// the CPU has it (x86-64 with PCLMULQDQ and SSE4.1; about 20 GB/s on large buffers against zlib's 2.5);
/// shorter buffers and other CPUs go through zlib's `crc32_z`. Both give zlib's value for every input and
/// every starting CRC, so chained updates may mix them freely.
package enum CRC32 {
    /// The shortest buffer `update` folds. From 16 bytes folding already beats zlib
    /// (`tools/microbench/crc32.c`); below 16 bytes CCRC32 has no folding path (only a bitwise loop) and
    /// zlib's table loop is the faster one.
    @inlinable
    static var foldThreshold: Int { 16 }

    /// Continues `crc` over `bytes`; start with 0. The empty range leaves the value unchanged.
    @inlinable
    package static func update(_ crc: UInt32, _ bytes: UnsafeRawBufferPointer) -> UInt32 {
        guard let base = bytes.baseAddress, !bytes.isEmpty else { return crc }
        if bytes.count >= foldThreshold && mkv_crc32_fold_available() != 0 {
            return mkv_crc32_fold(crc, base, bytes.count)
        }
        let result = crc32_z(UInt(crc), base.assumingMemoryBound(to: Bytef.self), bytes.count)
        return UInt32(truncatingIfNeeded: result)
    }

    /// The CRC-32 of `bytes`.
    package static func checksum(_ bytes: some Sequence<UInt8>) -> UInt32 {
        let array = Array(bytes)
        return array.withUnsafeBytes { update(0, $0) }
    }
}
