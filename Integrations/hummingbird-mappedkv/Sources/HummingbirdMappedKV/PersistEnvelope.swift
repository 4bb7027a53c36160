// The bytes the persist driver stores for one key: a one-byte tag, an optional expiry time, then the
// value's JSON.
//
// Layout (stored as one MappedKV bytes value):
//   tag 0x00: no expiry;                     followed by the JSON
//   tag 0x01: expiry; 8 bytes little-endian  followed by the JSON
//             Int64 milliseconds since 1970
// Invariant: `parse` never reads past the buffer it is given and never traps: a buffer that is not
// an envelope (empty, an unknown tag, too short for its expiry) is `nil`, so a value some other
// program put in the store is reported as a conversion failure, never misread.

import Foundation

/// One stored persist entry: when it expires, and where its JSON lies.
struct PersistEnvelope {
    /// The tag of an entry without an expiry time.
    static let foreverTag: UInt8 = 0
    /// The tag of an entry with an expiry time.
    static let expiringTag: UInt8 = 1
    /// The bytes before the JSON of an entry with an expiry time.
    static let expiringHeaderSize = 9

    /// The expiry time in milliseconds since 1970, or nil if the entry never expires.
    var expiresAt: Int64?
    /// The offset of the JSON in the envelope's bytes.
    var jsonOffset: Int

    /// Whether the entry is still alive at `now` (nanoseconds since 1970). An entry is alive up to
    /// and including its expiry millisecond, as Hummingbird's memory driver keeps it.
    func isAlive(at now: Int64) -> Bool {
        guard let expiresAt else { return true }
        return PersistTime.millisecond(of: now) <= expiresAt
    }

    /// Reads the header of `bytes`; nil if `bytes` is not an envelope.
    static func parse(_ bytes: UnsafeRawBufferPointer) -> PersistEnvelope? {
        guard let tag = bytes.first else { return nil }
        switch tag {
        case foreverTag:
            return PersistEnvelope(expiresAt: nil, jsonOffset: 1)
        case expiringTag:
            guard bytes.count >= expiringHeaderSize else { return nil }
            var raw: UInt64 = 0
            for index in (1..<expiringHeaderSize).reversed() {
                raw = raw << 8 | UInt64(bytes[index])
            }
            return PersistEnvelope(expiresAt: Int64(bitPattern: raw), jsonOffset: expiringHeaderSize)
        default:
            return nil
        }
    }

    /// The envelope of `json` expiring at `expiresAt` (milliseconds since 1970), or never if nil.
    static func encode(json: Data, expiresAt: Int64?) -> [UInt8] {
        var bytes: [UInt8] = []
        if let expiresAt {
            bytes.reserveCapacity(expiringHeaderSize + json.count)
            bytes.append(expiringTag)
            let raw = UInt64(bitPattern: expiresAt)
            for shift in stride(from: 0, to: 64, by: 8) {
                bytes.append(UInt8(truncatingIfNeeded: raw >> UInt64(shift)))
            }
        } else {
            bytes.reserveCapacity(1 + json.count)
            bytes.append(foreverTag)
        }
        bytes.append(contentsOf: json)
        return bytes
    }
}
