// The checks that make every payload decoder strict (docs/FORMAT.md 2.5, "Decoding rules"): a payload
// holds exactly one value of the requested type, so bytes left over after it, a varint wider than
// 64 bits, or an inner length that disagrees with the payload length mean the key holds a value of
// another type. Nothing MMKV writes fails these checks; they turn a wrong-type read into
// ``FormatError/payloadMismatch(expected:found:)`` instead of a plausible wrong value.

extension ByteCursor {
    /// Reads the single varint a number or bool payload holds: a non-empty payload that is one varint
    /// of at most 64 bits, with no bytes after it.
    @inlinable
    package mutating func readWholeVarint(expected: @autoclosure () -> String) throws(FormatError) -> UInt64 {
        guard !isAtEnd else { throw .emptyPayload }
        let start = position
        let value = try readVarint64()
        // A 10th byte carries bit 63 only: anything above 1 there is wider than 64 bits.
        if position - start == Varint.maxLength, bytes[position - 1] > 1 {
            throw .payloadMismatch(expected: expected(), found: "a varint wider than 64 bits")
        }
        try expectEnd(expected: expected())
        return value
    }

    /// Reads `varint(n)` and the n bytes after it, which must be exactly the rest of the payload.
    @inlinable
    package mutating func readWholeLengthDelimited(
        expected: @autoclosure () -> String
    ) throws(FormatError) -> UnsafeRawBufferPointer {
        let length = try readLength()
        guard length == remaining else {
            throw .payloadMismatch(
                expected: expected(), found: "an inner length of \(length) with \(remaining) bytes after it")
        }
        return try readBytes(length)
    }

    /// Throws unless every byte has been read.
    @inlinable
    package func expectEnd(expected: @autoclosure () -> String) throws(FormatError) {
        guard isAtEnd else {
            throw .payloadMismatch(expected: expected(), found: "\(remaining) more bytes after the value")
        }
    }
}

/// Checks the length of a fixed-width payload (`Float`, `Double`).
@inlinable
func checkFixedWidth(_ payload: UnsafeRawBufferPointer, _ width: Int, expected: String) throws(FormatError) {
    guard payload.count == width else {
        throw .payloadMismatch(expected: expected, found: "\(payload.count) bytes")
    }
}
