/// The 4-byte expiry time MMKV appends to every value when key expiry is on (docs/FORMAT.md section 5).
///
/// The time is a little-endian `UInt32` of seconds since 1970; 0 means "never". Being 32-bit,
/// the format cannot express times after 2106-02-07 06:28:15 UTC: later times are clamped to
/// `UInt32.max`, which is then the last representable second.
package enum ExpirySuffix {
    /// The suffix length in bytes.
    package static let length = 4
    /// The stored time meaning "never expires".
    package static let never: UInt32 = 0

    /// The expiry time for a value set at `now` that lives `duration` seconds: 0 (never) for a zero
    /// duration, otherwise `now + duration` saturating at `UInt32.max`.
    @inlinable
    package static func expiration(now: UInt32, duration: UInt32) -> UInt32 {
        guard duration != 0 else { return never }
        let (sum, overflow) = now.addingReportingOverflow(duration)
        return overflow ? .max : sum
    }

    /// Whether a value with expiry `time` is expired at `now`.
    @inlinable
    package static func isExpired(_ time: UInt32, now: UInt32) -> Bool {
        time != never && time <= now
    }

    /// The expiry time stored at the end of `payload`, or nil if the payload is shorter than the suffix
    /// (MMKV returns such values as they are).
    @inlinable
    package static func time(of payload: UnsafeRawBufferPointer) -> UInt32? {
        guard payload.count >= length else { return nil }
        return UInt32(littleEndian: payload.loadUnaligned(fromByteOffset: payload.count - length, as: UInt32.self))
    }

    /// Appends the suffix for `time` to `bytes`.
    @inlinable
    package static func append(_ time: UInt32, to bytes: inout [UInt8]) {
        withUnsafeBytes(of: time.littleEndian) { bytes.append(contentsOf: $0) }
    }
}
