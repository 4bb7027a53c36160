/// Tells whether key bytes are well-formed UTF-8, eight ASCII bytes at a time.
enum UTF8Check {
    /// Whether `bytes` are well-formed UTF-8.
    static func isValid(_ bytes: UnsafeRawBufferPointer) -> Bool {
        var offset = 0
        while bytes.count - offset >= 8 {
            if bytes.loadUnaligned(fromByteOffset: offset, as: UInt64.self) & 0x8080_8080_8080_8080 != 0 { return validates(bytes) }
            offset += 8
        }
        while offset < bytes.count {
            if bytes[offset] >= 0x80 { return validates(bytes) }
            offset += 1
        }
        return true
    }

    /// The full check, for bytes that are not all ASCII.
    private static func validates(_ bytes: UnsafeRawBufferPointer) -> Bool {
        bytes.withMemoryRebound(to: UInt8.self) { String(validating: $0, as: UTF8.self) != nil }
    }
}
