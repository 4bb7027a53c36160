// The value inside a stored bytes payload, for walks of the store that see payloads as stored.
//
// A bytes value is stored as a varint length followed by that many bytes (docs/FORMAT.md section
// 2.5). Invariant: `value(ofPayload:)` never reads past the payload and returns nil for anything
// that is not exactly one such value, so a malformed or foreign payload is skipped, never misread.

/// Reads the bytes value of a stored payload.
enum StoredBytes {
    /// The bytes of the value `payload` holds, or nil if `payload` is not a bytes value.
    static func value(ofPayload payload: UnsafeRawBufferPointer) -> UnsafeRawBufferPointer? {
        var length: UInt64 = 0
        var shift: UInt64 = 0
        var index = 0
        while true {
            guard index < payload.count, shift < 64 else { return nil }
            let byte = payload[index]
            index += 1
            length |= UInt64(byte & 0x7F) << shift
            if byte & 0x80 == 0 { break }
            shift += 7
        }
        guard length == UInt64(payload.count - index) else { return nil }
        return UnsafeRawBufferPointer(rebasing: payload[index...])
    }
}
