/// A type whose values have an MMKV value payload encoding (docs/FORMAT.md section 2.5).
///
/// The file stores no type tag: the reader chooses the type. Decoding is strict: the payload must
/// hold exactly one encoded value of the type, so bytes that no value of the type encodes to (a
/// wrong length, bytes after the value, a number out of range, invalid UTF-8) throw, usually
/// ``FormatError/payloadMismatch(expected:found:)``, where MMKV's getters would return a plausible
/// wrong value. What strictness cannot detect is listed in docs/FORMAT.md 2.5.
public protocol PayloadCodable {
    /// Appends this value's payload bytes to `bytes`.
    func encodePayload(into bytes: inout [UInt8])
    /// Decodes a value from `payload`, which must hold exactly one encoded value.
    init(payload: UnsafeRawBufferPointer) throws(FormatError)
    /// The length of this value's payload when it is known without encoding it (a number's, a
    /// string's), or `nil` (the default) when only encoding tells. When it is known, a writer can
    /// make room for the payload first and then encode it in place with ``writePayload(to:)``.
    var directPayloadLength: Int? { get }
    /// Writes this value's payload at `destination`, which has room for it: exactly
    /// ``directPayloadLength`` bytes when that is known. The default encodes the payload with
    /// ``encodePayload(into:)`` and copies it.
    func writePayload(to destination: UnsafeMutableRawPointer)
}

extension PayloadCodable {
    /// `nil`: the payload's length is known only by encoding it.
    @inlinable
    public var directPayloadLength: Int? { nil }

    /// Encodes the payload with ``encodePayload(into:)`` and copies it to `destination`.
    @inlinable
    public func writePayload(to destination: UnsafeMutableRawPointer) {
        var bytes: [UInt8] = []
        encodePayload(into: &bytes)
        bytes.withUnsafeBytes { encoded in
            guard let source = encoded.baseAddress else { return }
            destination.copyMemory(from: source, byteCount: encoded.count)
        }
    }
}

extension PayloadCodable {
    /// This value's payload bytes.
    public var payloadBytes: [UInt8] {
        var bytes: [UInt8] = []
        encodePayload(into: &bytes)
        return bytes
    }

    /// Decodes a value from `payload`, which must hold exactly one encoded value.
    public init(payload: [UInt8]) throws(FormatError) {
        self = try payload.withRawBytes { (raw) throws(FormatError) in try Self(payload: raw) }
    }
}

/// An element type whose arrays have a payload encoding: `[UInt8]` (bytes) and `[String]` (string vector).
public protocol PayloadArrayElement {
    /// Appends the payload of `array` to `bytes`.
    static func encodeArrayPayload(_ array: [Self], into bytes: inout [UInt8])
    /// Decodes an array payload.
    static func decodeArrayPayload(_ payload: UnsafeRawBufferPointer) throws(FormatError) -> [Self]
}

extension Array: PayloadCodable where Element: PayloadArrayElement {
    /// Appends the array's payload, as ``PayloadArrayElement/encodeArrayPayload(_:into:)`` encodes it.
    @inlinable
    public func encodePayload(into bytes: inout [UInt8]) { Element.encodeArrayPayload(self, into: &bytes) }
    /// Decodes an array payload, as ``PayloadArrayElement/decodeArrayPayload(_:)`` decodes it.
    @inlinable
    public init(payload: UnsafeRawBufferPointer) throws(FormatError) { self = try Element.decodeArrayPayload(payload) }
}
