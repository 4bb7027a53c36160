/// Tells whether bytes are well-formed UTF-8, eight ASCII bytes at a time.
@usableFromInline
package enum UTF8Check {
    /// Whether every byte of `bytes` is ASCII.
    @inlinable
    package static func isASCII(_ bytes: UnsafeRawBufferPointer) -> Bool {
        var offset = 0
        while bytes.count - offset >= 8 {
            if bytes.loadUnaligned(fromByteOffset: offset, as: UInt64.self) & 0x8080_8080_8080_8080 != 0 {
                return false
            }
            offset += 8
        }
        while offset < bytes.count {
            if bytes[offset] >= 0x80 { return false }
            offset += 1
        }
        return true
    }

    /// Whether `bytes` are well-formed UTF-8.
    @inlinable
    package static func isValid(_ bytes: UnsafeRawBufferPointer) -> Bool {
        isASCII(bytes) || string(validating: bytes) != nil
    }

    /// The string `bytes` encode, or nil if they are not well-formed UTF-8.
    @inlinable
    package static func string(validating bytes: UnsafeRawBufferPointer) -> String? {
        bytes.withMemoryRebound(to: UInt8.self) { buffer in
            // ASCII is valid UTF-8, and decoding it takes String's fastest path; anything else is
            // checked strictly (decoding would repair it instead).
            isASCII(bytes) ? String(decoding: buffer, as: UTF8.self) : String(validating: buffer, as: UTF8.self)
        }
    }
}
