// Fixed and varint encodings of numbers and booleans (docs/FORMAT.md section 2.5).

extension Bool: PayloadCodable {
    /// One byte, `00` or `01`.
    @inlinable
    public func encodePayload(into bytes: inout [UInt8]) { bytes.append(self ? 1 : 0) }
    /// Read as a varint and tested against zero, as MMKV's `readBool` does.
    @inlinable
    public init(payload: UnsafeRawBufferPointer) throws(FormatError) {
        guard !payload.isEmpty else { throw .emptyPayload }
        var cursor = ByteCursor(payload)
        self = try cursor.readVarint32() != 0
    }
}

extension Int32: PayloadCodable {
    /// A varint; negative values are sign-extended to 64 bits, so they always take 10 bytes.
    @inlinable
    public func encodePayload(into bytes: inout [UInt8]) {
        Varint.append(UInt64(bitPattern: Int64(self)), to: &bytes)
    }
    /// The low 32 bits of a varint of up to 10 bytes.
    @inlinable
    public init(payload: UnsafeRawBufferPointer) throws(FormatError) {
        guard !payload.isEmpty else { throw .emptyPayload }
        var cursor = ByteCursor(payload)
        self = Int32(bitPattern: try cursor.readVarint32())
    }
}

extension UInt32: PayloadCodable {
    /// A varint.
    @inlinable
    public func encodePayload(into bytes: inout [UInt8]) { Varint.append(UInt64(self), to: &bytes) }
    /// The low 32 bits of a varint.
    @inlinable
    public init(payload: UnsafeRawBufferPointer) throws(FormatError) {
        guard !payload.isEmpty else { throw .emptyPayload }
        var cursor = ByteCursor(payload)
        self = try cursor.readVarint32()
    }
}

extension Int64: PayloadCodable {
    /// A varint of the two's-complement bits (10 bytes when negative).
    @inlinable
    public func encodePayload(into bytes: inout [UInt8]) { Varint.append(UInt64(bitPattern: self), to: &bytes) }
    /// A varint read as two's-complement bits.
    @inlinable
    public init(payload: UnsafeRawBufferPointer) throws(FormatError) {
        guard !payload.isEmpty else { throw .emptyPayload }
        var cursor = ByteCursor(payload)
        self = Int64(bitPattern: try cursor.readVarint64())
    }
}

extension UInt64: PayloadCodable {
    /// A varint.
    @inlinable
    public func encodePayload(into bytes: inout [UInt8]) { Varint.append(self, to: &bytes) }
    /// A varint.
    @inlinable
    public init(payload: UnsafeRawBufferPointer) throws(FormatError) {
        guard !payload.isEmpty else { throw .emptyPayload }
        var cursor = ByteCursor(payload)
        self = try cursor.readVarint64()
    }
}

extension Float: PayloadCodable {
    /// Four bytes, IEEE-754 little-endian.
    @inlinable
    public func encodePayload(into bytes: inout [UInt8]) {
        withUnsafeBytes(of: bitPattern.littleEndian) { bytes.append(contentsOf: $0) }
    }
    /// Four bytes, IEEE-754 little-endian.
    @inlinable
    public init(payload: UnsafeRawBufferPointer) throws(FormatError) {
        var cursor = ByteCursor(payload)
        self = Float(bitPattern: try cursor.readLittleEndian(UInt32.self))
    }
}

extension Double: PayloadCodable {
    /// Eight bytes, IEEE-754 little-endian.
    @inlinable
    public func encodePayload(into bytes: inout [UInt8]) {
        withUnsafeBytes(of: bitPattern.littleEndian) { bytes.append(contentsOf: $0) }
    }
    /// Eight bytes, IEEE-754 little-endian.
    @inlinable
    public init(payload: UnsafeRawBufferPointer) throws(FormatError) {
        var cursor = ByteCursor(payload)
        self = Double(bitPattern: try cursor.readLittleEndian(UInt64.self))
    }
}

extension Int: PayloadCodable {
    /// Stored as an MMKV int64: a varint of the two's-complement bits.
    @inlinable
    public func encodePayload(into bytes: inout [UInt8]) { Int64(self).encodePayload(into: &bytes) }
    /// Read as an MMKV int64.
    @inlinable
    public init(payload: UnsafeRawBufferPointer) throws(FormatError) { self = Int(try Int64(payload: payload)) }
}
