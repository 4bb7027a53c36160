// Strings, bytes and string vectors: payloads that carry their own inner length (docs/FORMAT.md section 2.5).

extension String: PayloadCodable {
    /// `varint(byteCount)` followed by the UTF-8 bytes. The empty string is the single byte `00`.
    @inlinable
    public func encodePayload(into bytes: inout [UInt8]) {
        Varint.append(UInt64(utf8.count), to: &bytes)
        bytes.append(contentsOf: utf8)
    }
    /// The varint of the UTF-8 length and the UTF-8 bytes.
    @inlinable
    public var directPayloadLength: Int? {
        let count = utf8.count
        return Varint.size(of: UInt64(count)) + count
    }
    /// Writes the varint of the UTF-8 length, then the UTF-8 bytes.
    @inlinable
    public func writePayload(to destination: UnsafeMutableRawPointer) {
        let count = utf8.count
        let start = destination + Varint.write(UInt64(count), to: destination)
        let copied: Void? = utf8.withContiguousStorageIfAvailable { utf8 in
            guard let source = utf8.baseAddress else { return }
            start.copyMemory(from: source, byteCount: count)
        }
        if copied == nil {
            for (offset, byte) in utf8.enumerated() { start.storeBytes(of: byte, toByteOffset: offset, as: UInt8.self) }
        }
    }
    /// Reads the inner length and that many bytes, which must be valid UTF-8 and exactly the rest
    /// of the payload.
    @inlinable
    public init(payload: UnsafeRawBufferPointer) throws(FormatError) {
        var cursor = ByteCursor(payload)
        let bytes = try cursor.readWholeLengthDelimited(expected: "a String (varint(n) + n UTF-8 bytes)")
        guard let string = UTF8Check.string(validating: bytes) else { throw .invalidUTF8 }
        self = string
    }
}

extension UInt8: PayloadArrayElement {
    /// `varint(count)` followed by the bytes.
    @inlinable
    public static func encodeArrayPayload(_ array: [UInt8], into bytes: inout [UInt8]) {
        Varint.append(UInt64(array.count), to: &bytes)
        bytes.append(contentsOf: array)
    }
    /// Reads the inner length and that many bytes, which must be exactly the rest of the payload.
    @inlinable
    public static func decodeArrayPayload(_ payload: UnsafeRawBufferPointer) throws(FormatError) -> [UInt8] {
        var cursor = ByteCursor(payload)
        return Array(try cursor.readWholeLengthDelimited(expected: "bytes (varint(n) + n bytes)"))
    }
}

extension String: PayloadArrayElement {
    /// `varint(totalLength)` followed by `varint(length) bytes` for each string.
    public static func encodeArrayPayload(_ array: [String], into bytes: inout [UInt8]) {
        let total = array.reduce(0) { $0 + Varint.size(of: UInt64($1.utf8.count)) + $1.utf8.count }
        Varint.append(UInt64(total), to: &bytes)
        for string in array { string.encodePayload(into: &bytes) }
    }
    /// Reads the total length, which must be exactly the rest of the payload, then strings until the
    /// payload ends (MMKV's `decodeOneVector`, which skips the total instead of checking it).
    public static func decodeArrayPayload(_ payload: UnsafeRawBufferPointer) throws(FormatError) -> [String] {
        var cursor = ByteCursor(payload)
        var strings = ByteCursor(try cursor.readWholeLengthDelimited(expected: "a [String] (varint(total) + strings)"))
        var result: [String] = []
        while !strings.isAtEnd { result.append(try strings.readString()) }
        return result
    }
}

extension ByteCursor {
    /// Reads `varint(length)` and that many bytes as UTF-8.
    @inlinable
    package mutating func readString() throws(FormatError) -> String {
        let length = try readLength()
        let bytes = try readBytes(length)
        guard let string = UTF8Check.string(validating: bytes) else { throw .invalidUTF8 }
        return string
    }
}
