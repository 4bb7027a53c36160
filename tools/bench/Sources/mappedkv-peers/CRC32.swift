import CBenchCRC32

/// MappedKVFormat's `CRC32.update`, which is `package`: the same C code, built in this package
/// (Sources/CBenchCRC32).
enum CRC32 {
    /// Continues `crc` over `bytes`; start with 0.
    static func update(_ crc: UInt32, _ bytes: UnsafeRawBufferPointer) -> UInt32 {
        bench_crc32_update(crc, bytes.baseAddress, bytes.count)
    }
}
