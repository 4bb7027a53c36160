// Strings, bytes and string vectors: payloads that carry their own inner length (docs/FORMAT.md section 2.5).

extension String: PayloadCodable {
    /// `varint(byteCount)` followed by the UTF-8 bytes. The empty string is the single byte `00`.
    @inlinable
    public func encodePayload(into bytes: inout [UInt8]) {
        Varint.append(UInt64(utf8.count), to: &bytes)
        bytes.append(contentsOf: utf8)
    }
    /// Reads the inner length and that many bytes, which must be valid UTF-8.
    @inlinable
    public init(payload: UnsafeRawBufferPointer) throws(FormatError) {
        var cursor = ByteCursor(payload)
        self = try cursor.readString()
    }
}

extension UInt8: PayloadArrayElement {
    /// `varint(count)` followed by the bytes.
    @inlinable
    public static func encodeArrayPayload(_ array: [UInt8], into bytes: inout [UInt8]) {
        Varint.append(UInt64(array.count), to: &bytes)
        bytes.append(contentsOf: array)
    }
    /// Reads the inner length and that many bytes.
    @inlinable
    public static func decodeArrayPayload(_ payload: UnsafeRawBufferPointer) throws(FormatError) -> [UInt8] {
        var cursor = ByteCursor(payload)
        let length = try cursor.readLength()
        return Array(try cursor.readBytes(length))
    }
}

extension String: PayloadArrayElement {
    /// `varint(totalLength)` followed by `varint(length) bytes` for each string.
    public static func encodeArrayPayload(_ array: [String], into bytes: inout [UInt8]) {
        let total = array.reduce(0) { $0 + Varint.size(of: UInt64($1.utf8.count)) + $1.utf8.count }
        Varint.append(UInt64(total), to: &bytes)
        for string in array { string.encodePayload(into: &bytes) }
    }
    /// Skips the total length, then reads strings until the payload ends (MMKV's `decodeOneVector`).
    public static func decodeArrayPayload(_ payload: UnsafeRawBufferPointer) throws(FormatError) -> [String] {
        var cursor = ByteCursor(payload)
        _ = try cursor.readVarint64()
        var strings: [String] = []
        while !cursor.isAtEnd { strings.append(try cursor.readString()) }
        return strings
    }
}

extension ByteCursor {
    /// Reads `varint(length)` and that many bytes as UTF-8.
    @inlinable
    public mutating func readString() throws(FormatError) -> String {
        let length = try readLength()
        let bytes = try readBytes(length)
        guard let string = UTF8Check.string(validating: bytes) else { throw .invalidUTF8 }
        return string
    }
}
