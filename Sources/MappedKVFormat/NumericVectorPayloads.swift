// Numeric vectors: MMKV's container encoding of `std::vector<T>` for number types (MMKV 2.x
// `set(std::vector<T>)` / `getVector<T>`; docs/FORMAT.md 2.5): `varint(total)` followed by the
// elements packed back to back, each in its scalar payload encoding, where `total` is the byte
// length of the packed elements. The empty vector is the single byte `00`.

/// A number type whose arrays are stored as MMKV's packed numeric vector: each element is
/// appended with ``appendElement(to:)`` and read back with ``init(reading:)``.
public protocol PackedVectorElement: PayloadCodable, PayloadArrayElement {
    /// Appends this value's scalar payload (docs/FORMAT.md 2.5) to `bytes`.
    func appendElement(to bytes: inout [UInt8])
    /// Reads one value from `cursor`.
    init(reading cursor: inout ByteCursor) throws(FormatError)
}

extension PackedVectorElement {
    public func appendElement(to bytes: inout [UInt8]) { encodePayload(into: &bytes) }

    /// `varint(total)` followed by the packed elements.
    public static func encodeArrayPayload(_ array: [Self], into bytes: inout [UInt8]) {
        var packed: [UInt8] = []
        for element in array { element.appendElement(to: &packed) }
        Varint.append(UInt64(packed.count), to: &bytes)
        bytes.append(contentsOf: packed)
    }

    /// Reads `varint(total)`, then elements until `total` bytes are used (or the payload ends
    /// first, for MMKV's reader tolerance). An element cut short is an error.
    public static func decodeArrayPayload(_ payload: UnsafeRawBufferPointer) throws(FormatError) -> [Self] {
        var cursor = ByteCursor(payload)
        let total = try cursor.readVarint64()
        let end = cursor.position + Int(min(total, UInt64(cursor.remaining)))
        var elements: [Self] = []
        var inner = ByteCursor(UnsafeRawBufferPointer(rebasing: payload[cursor.position..<end]))
        while !inner.isAtEnd { elements.append(try Self(reading: &inner)) }
        return elements
    }
}

extension Int32: PackedVectorElement {
    public init(reading cursor: inout ByteCursor) throws(FormatError) {
        self = Int32(bitPattern: UInt32(truncatingIfNeeded: try cursor.readVarint64()))
    }
}

extension UInt32: PackedVectorElement {
    public init(reading cursor: inout ByteCursor) throws(FormatError) {
        self = UInt32(truncatingIfNeeded: try cursor.readVarint64())
    }
}

extension Int64: PackedVectorElement {
    public init(reading cursor: inout ByteCursor) throws(FormatError) {
        self = Int64(bitPattern: try cursor.readVarint64())
    }
}

extension UInt64: PackedVectorElement {
    public init(reading cursor: inout ByteCursor) throws(FormatError) { self = try cursor.readVarint64() }
}

extension Int: PackedVectorElement {
    public init(reading cursor: inout ByteCursor) throws(FormatError) {
        self = Int(truncatingIfNeeded: Int64(bitPattern: try cursor.readVarint64()))
    }
}

extension Float: PackedVectorElement {
    public init(reading cursor: inout ByteCursor) throws(FormatError) {
        self = Float(bitPattern: try cursor.readLittleEndian(UInt32.self))
    }
}

extension Double: PackedVectorElement {
    public init(reading cursor: inout ByteCursor) throws(FormatError) {
        self = Double(bitPattern: try cursor.readLittleEndian(UInt64.self))
    }
}

extension Bool: PackedVectorElement {
    /// MMKV writes one byte per element; any non-zero varint reads as true.
    public init(reading cursor: inout ByteCursor) throws(FormatError) { self = try cursor.readVarint64() != 0 }
}
