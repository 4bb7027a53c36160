// Numeric vectors: MMKV's container encoding of `std::vector<T>` for number types (MMKV 2.x
// `set(std::vector<T>)` / `getVector<T>`; docs/FORMAT.md 2.5): `varint(total)` followed by the
// elements packed back to back, each in its scalar payload encoding, where `total` is the byte
// length of the packed elements. The empty vector is the single byte `00`.

/// A number type whose arrays are stored as MMKV's packed numeric vector: each element is
/// appended with ``appendElement(to:)`` and read back with ``init(reading:)``. The number types'
/// public ``PayloadArrayElement`` conformances below encode and decode through it.
package protocol PackedVectorElement: PayloadCodable {
    /// Appends this value's scalar payload (docs/FORMAT.md 2.5) to `bytes`.
    func appendElement(to bytes: inout [UInt8])
    /// Reads one value from `cursor`.
    init(reading cursor: inout ByteCursor) throws(FormatError)
}

extension PackedVectorElement {
    /// Appends the element's scalar payload (``PayloadCodable/encodePayload(into:)``).
    package func appendElement(to bytes: inout [UInt8]) { encodePayload(into: &bytes) }

    /// `varint(total)` followed by the packed elements.
    package static func encodePackedVector(_ array: [Self], into bytes: inout [UInt8]) {
        var packed: [UInt8] = []
        for element in array { element.appendElement(to: &packed) }
        Varint.append(UInt64(packed.count), to: &bytes)
        bytes.append(contentsOf: packed)
    }

    /// Reads `varint(total)` and then elements until the payload ends, strictly: the total must equal
    /// the bytes after it, which must be whole elements, each a valid payload of its type (docs/FORMAT.md
    /// 2.5). MMKV's reader skips the total; on everything MMKV writes the two agree.
    package static func decodePackedVector(_ payload: UnsafeRawBufferPointer) throws(FormatError) -> [Self] {
        var cursor = ByteCursor(payload)
        let total = try cursor.readVarint64()
        guard total == UInt64(cursor.remaining) else {
            throw .payloadMismatch(
                expected: "a vector of \(Self.self)",
                found: "a total of \(total) with \(cursor.remaining) bytes after it")
        }
        var elements: [Self] = []
        while !cursor.isAtEnd { elements.append(try Self(reading: &cursor)) }
        return elements
    }

    /// Reads one varint element and checks it as a payload of its own: in range, no wider than 64 bits.
    static func readVarintElement(_ cursor: inout ByteCursor) throws(FormatError) -> Self {
        let start = cursor.position
        _ = try cursor.readVarint64()
        return try Self(payload: UnsafeRawBufferPointer(rebasing: cursor.bytes[start..<cursor.position]))
    }

    /// Reads one fixed-width element of `width` bytes.
    static func readFixedElement(_ cursor: inout ByteCursor, width: Int) throws(FormatError) -> Self {
        try Self(payload: try cursor.readBytes(width))
    }
}

extension Int32: PackedVectorElement, PayloadArrayElement {
    /// Reads one varint element, checked as an `Int32` payload.
    package init(reading cursor: inout ByteCursor) throws(FormatError) { self = try Self.readVarintElement(&cursor) }
    /// MMKV's packed numeric vector: `varint(total)` followed by the elements' scalar payloads.
    public static func encodeArrayPayload(_ array: [Int32], into bytes: inout [UInt8]) {
        encodePackedVector(array, into: &bytes)
    }
    /// Reads a packed numeric vector, strictly: the total must be exactly the whole elements after it.
    public static func decodeArrayPayload(_ payload: UnsafeRawBufferPointer) throws(FormatError) -> [Int32] {
        try decodePackedVector(payload)
    }
}

extension UInt32: PackedVectorElement, PayloadArrayElement {
    /// Reads one varint element, checked as a `UInt32` payload.
    package init(reading cursor: inout ByteCursor) throws(FormatError) { self = try Self.readVarintElement(&cursor) }
    /// MMKV's packed numeric vector: `varint(total)` followed by the elements' scalar payloads.
    public static func encodeArrayPayload(_ array: [UInt32], into bytes: inout [UInt8]) {
        encodePackedVector(array, into: &bytes)
    }
    /// Reads a packed numeric vector, strictly: the total must be exactly the whole elements after it.
    public static func decodeArrayPayload(_ payload: UnsafeRawBufferPointer) throws(FormatError) -> [UInt32] {
        try decodePackedVector(payload)
    }
}

extension Int64: PackedVectorElement, PayloadArrayElement {
    /// Reads one varint element, checked as an `Int64` payload.
    package init(reading cursor: inout ByteCursor) throws(FormatError) { self = try Self.readVarintElement(&cursor) }
    /// MMKV's packed numeric vector: `varint(total)` followed by the elements' scalar payloads.
    public static func encodeArrayPayload(_ array: [Int64], into bytes: inout [UInt8]) {
        encodePackedVector(array, into: &bytes)
    }
    /// Reads a packed numeric vector, strictly: the total must be exactly the whole elements after it.
    public static func decodeArrayPayload(_ payload: UnsafeRawBufferPointer) throws(FormatError) -> [Int64] {
        try decodePackedVector(payload)
    }
}

extension UInt64: PackedVectorElement, PayloadArrayElement {
    /// Reads one varint element, checked as a `UInt64` payload.
    package init(reading cursor: inout ByteCursor) throws(FormatError) { self = try Self.readVarintElement(&cursor) }
    /// MMKV's packed numeric vector: `varint(total)` followed by the elements' scalar payloads.
    public static func encodeArrayPayload(_ array: [UInt64], into bytes: inout [UInt8]) {
        encodePackedVector(array, into: &bytes)
    }
    /// Reads a packed numeric vector, strictly: the total must be exactly the whole elements after it.
    public static func decodeArrayPayload(_ payload: UnsafeRawBufferPointer) throws(FormatError) -> [UInt64] {
        try decodePackedVector(payload)
    }
}

extension Int: PackedVectorElement, PayloadArrayElement {
    /// Reads one varint element, checked as an `Int` (int64) payload.
    package init(reading cursor: inout ByteCursor) throws(FormatError) { self = try Self.readVarintElement(&cursor) }
    /// MMKV's packed numeric vector: `varint(total)` followed by the elements' scalar payloads.
    public static func encodeArrayPayload(_ array: [Int], into bytes: inout [UInt8]) {
        encodePackedVector(array, into: &bytes)
    }
    /// Reads a packed numeric vector, strictly: the total must be exactly the whole elements after it.
    public static func decodeArrayPayload(_ payload: UnsafeRawBufferPointer) throws(FormatError) -> [Int] {
        try decodePackedVector(payload)
    }
}

extension Float: PackedVectorElement, PayloadArrayElement {
    /// Reads one 4-byte little-endian element.
    package init(reading cursor: inout ByteCursor) throws(FormatError) {
        self = try Self.readFixedElement(&cursor, width: 4)
    }
    /// MMKV's packed numeric vector: `varint(total)` followed by the elements' scalar payloads.
    public static func encodeArrayPayload(_ array: [Float], into bytes: inout [UInt8]) {
        encodePackedVector(array, into: &bytes)
    }
    /// Reads a packed numeric vector, strictly: the total must be exactly the whole elements after it.
    public static func decodeArrayPayload(_ payload: UnsafeRawBufferPointer) throws(FormatError) -> [Float] {
        try decodePackedVector(payload)
    }
}

extension Double: PackedVectorElement, PayloadArrayElement {
    /// Reads one 8-byte little-endian element.
    package init(reading cursor: inout ByteCursor) throws(FormatError) {
        self = try Self.readFixedElement(&cursor, width: 8)
    }
    /// MMKV's packed numeric vector: `varint(total)` followed by the elements' scalar payloads.
    public static func encodeArrayPayload(_ array: [Double], into bytes: inout [UInt8]) {
        encodePackedVector(array, into: &bytes)
    }
    /// Reads a packed numeric vector, strictly: the total must be exactly the whole elements after it.
    public static func decodeArrayPayload(_ payload: UnsafeRawBufferPointer) throws(FormatError) -> [Double] {
        try decodePackedVector(payload)
    }
}

extension Bool: PackedVectorElement, PayloadArrayElement {
    /// MMKV writes one byte per element, 0 or 1.
    package init(reading cursor: inout ByteCursor) throws(FormatError) { self = try Self.readVarintElement(&cursor) }
    /// MMKV's packed numeric vector: `varint(total)` followed by the elements' scalar payloads.
    public static func encodeArrayPayload(_ array: [Bool], into bytes: inout [UInt8]) {
        encodePackedVector(array, into: &bytes)
    }
    /// Reads a packed numeric vector, strictly: the total must be exactly the whole elements after it.
    public static func decodeArrayPayload(_ payload: UnsafeRawBufferPointer) throws(FormatError) -> [Bool] {
        try decodePackedVector(payload)
    }
}
