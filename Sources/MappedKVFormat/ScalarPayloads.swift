// Fixed and varint encodings of numbers and booleans (docs/FORMAT.md section 2.5).

extension Bool: PayloadCodable {
    /// One byte, `00` or `01`.
    @inlinable
    public func encodePayload(into bytes: inout [UInt8]) { bytes.append(self ? 1 : 0) }
    /// One byte.
    @inlinable
    public var directPayloadLength: Int? { 1 }
    /// Writes the byte `00` or `01`.
    @inlinable
    public func writePayload(to destination: UnsafeMutableRawPointer) {
        destination.storeBytes(of: self ? 1 : 0, as: UInt8.self)
    }
    /// One varint of value 0 or 1 and nothing else (MMKV writes the single byte `00` or `01`).
    ///
    /// MMKV's `readBool` tests any varint against zero; a larger value, or bytes after the varint,
    /// cannot be a stored `Bool` and throws ``FormatError/payloadMismatch(expected:found:)``.
    @inlinable
    public init(payload: UnsafeRawBufferPointer) throws(FormatError) {
        var cursor = ByteCursor(payload)
        let value = try cursor.readWholeVarint(expected: "a Bool (one byte, 00 or 01)")
        guard value <= 1 else { throw .payloadMismatch(expected: "a Bool (one byte, 00 or 01)", found: "\(value)") }
        self = value == 1
    }
}

extension Int32: PayloadCodable {
    /// A varint; negative values are sign-extended to 64 bits, so they always take 10 bytes.
    @inlinable
    public func encodePayload(into bytes: inout [UInt8]) {
        Varint.append(UInt64(bitPattern: Int64(self)), to: &bytes)
    }
    /// The length of the varint.
    @inlinable
    public var directPayloadLength: Int? { Varint.size(of: UInt64(bitPattern: Int64(self))) }
    /// Writes the varint.
    @inlinable
    public func writePayload(to destination: UnsafeMutableRawPointer) {
        _ = Varint.write(UInt64(bitPattern: Int64(self)), to: destination)
    }
    /// One varint holding an `Int32`: below 2^32 (a non-negative value, or a negative one in the
    /// 5-byte form that keeps only the low 32 bits) or a negative value sign-extended to 64 bits.
    /// Anything else (an int64 outside Int32's range, trailing bytes) throws
    /// ``FormatError/payloadMismatch(expected:found:)``.
    @inlinable
    public init(payload: UnsafeRawBufferPointer) throws(FormatError) {
        var cursor = ByteCursor(payload)
        let value = try cursor.readWholeVarint(expected: "an Int32 (a varint)")
        guard value <= UInt64(UInt32.max) || (Int64(Int32.min)..<0).contains(Int64(bitPattern: value)) else {
            throw .payloadMismatch(expected: "an Int32 (a varint)", found: "the varint \(value), outside Int32's range")
        }
        self = Int32(truncatingIfNeeded: value)
    }
}

extension UInt32: PayloadCodable {
    /// A varint.
    @inlinable
    public func encodePayload(into bytes: inout [UInt8]) { Varint.append(UInt64(self), to: &bytes) }
    /// The length of the varint.
    @inlinable
    public var directPayloadLength: Int? { Varint.size(of: UInt64(self)) }
    /// Writes the varint.
    @inlinable
    public func writePayload(to destination: UnsafeMutableRawPointer) {
        _ = Varint.write(UInt64(self), to: destination)
    }
    /// One varint below 2^32; anything else throws ``FormatError/payloadMismatch(expected:found:)``.
    @inlinable
    public init(payload: UnsafeRawBufferPointer) throws(FormatError) {
        var cursor = ByteCursor(payload)
        let value = try cursor.readWholeVarint(expected: "a UInt32 (a varint)")
        guard let narrow = UInt32(exactly: value) else {
            throw .payloadMismatch(expected: "a UInt32 (a varint)", found: "the varint \(value), above UInt32.max")
        }
        self = narrow
    }
}

extension Int64: PayloadCodable {
    /// A varint of the two's-complement bits (10 bytes when negative).
    @inlinable
    public func encodePayload(into bytes: inout [UInt8]) { Varint.append(UInt64(bitPattern: self), to: &bytes) }
    /// The length of the varint.
    @inlinable
    public var directPayloadLength: Int? { Varint.size(of: UInt64(bitPattern: self)) }
    /// Writes the varint.
    @inlinable
    public func writePayload(to destination: UnsafeMutableRawPointer) {
        _ = Varint.write(UInt64(bitPattern: self), to: destination)
    }
    /// One varint of at most 64 bits, read as two's-complement bits, with nothing after it.
    @inlinable
    public init(payload: UnsafeRawBufferPointer) throws(FormatError) {
        var cursor = ByteCursor(payload)
        self = Int64(bitPattern: try cursor.readWholeVarint(expected: "an Int64 (a varint)"))
    }
}

extension UInt64: PayloadCodable {
    /// A varint.
    @inlinable
    public func encodePayload(into bytes: inout [UInt8]) { Varint.append(self, to: &bytes) }
    /// The length of the varint.
    @inlinable
    public var directPayloadLength: Int? { Varint.size(of: self) }
    /// Writes the varint.
    @inlinable
    public func writePayload(to destination: UnsafeMutableRawPointer) { _ = Varint.write(self, to: destination) }
    /// One varint of at most 64 bits, with nothing after it.
    @inlinable
    public init(payload: UnsafeRawBufferPointer) throws(FormatError) {
        var cursor = ByteCursor(payload)
        self = try cursor.readWholeVarint(expected: "a UInt64 (a varint)")
    }
}

extension Float: PayloadCodable {
    /// Four bytes, IEEE-754 little-endian.
    @inlinable
    public func encodePayload(into bytes: inout [UInt8]) {
        withUnsafeBytes(of: bitPattern.littleEndian) { bytes.append(contentsOf: $0) }
    }
    /// 4 bytes.
    @inlinable
    public var directPayloadLength: Int? { 4 }
    /// Writes the 4 bytes, little-endian.
    @inlinable
    public func writePayload(to destination: UnsafeMutableRawPointer) {
        destination.storeBytes(of: bitPattern.littleEndian, as: UInt32.self)
    }
    /// Exactly four bytes, IEEE-754 little-endian.
    @inlinable
    public init(payload: UnsafeRawBufferPointer) throws(FormatError) {
        try checkFixedWidth(payload, 4, expected: "a Float (4 bytes)")
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
    /// 8 bytes.
    @inlinable
    public var directPayloadLength: Int? { 8 }
    /// Writes the 8 bytes, little-endian.
    @inlinable
    public func writePayload(to destination: UnsafeMutableRawPointer) {
        destination.storeBytes(of: bitPattern.littleEndian, as: UInt64.self)
    }
    /// Exactly eight bytes, IEEE-754 little-endian.
    @inlinable
    public init(payload: UnsafeRawBufferPointer) throws(FormatError) {
        try checkFixedWidth(payload, 8, expected: "a Double (8 bytes)")
        var cursor = ByteCursor(payload)
        self = Double(bitPattern: try cursor.readLittleEndian(UInt64.self))
    }
}

extension Int: PayloadCodable {
    /// Stored as an MMKV int64: a varint of the two's-complement bits.
    @inlinable
    public func encodePayload(into bytes: inout [UInt8]) { Int64(self).encodePayload(into: &bytes) }
    /// As an MMKV int64's.
    @inlinable
    public var directPayloadLength: Int? { Int64(self).directPayloadLength }
    /// As an MMKV int64.
    @inlinable
    public func writePayload(to destination: UnsafeMutableRawPointer) { Int64(self).writePayload(to: destination) }
    /// Read as an MMKV int64.
    @inlinable
    public init(payload: UnsafeRawBufferPointer) throws(FormatError) { self = Int(try Int64(payload: payload)) }
}
