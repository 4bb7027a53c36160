// The first 8 bytes of a key as an integer that orders as the keys do: for two keys, a smaller
// prefix means a smaller key, and only keys whose prefixes are equal must be compared byte by byte.
// An index keeps a key's prefix beside each of its elements so that most comparisons between
// elements with equal values never read a key.

/// The order-keeping 8-byte prefix of a key.
enum KeyPrefix {
    /// The first 8 bytes of `key`'s UTF-8, big-endian, zero-padded: integers ordered as the keys
    /// are, except that keys with equal prefixes may differ (then the keys themselves decide).
    static func of(_ key: String) -> UInt64 {
        var key = key
        return key.withUTF8 { bytes in
            var prefix: UInt64 = 0
            let length = min(8, bytes.count)
            for index in 0..<length { prefix = prefix << 8 | UInt64(bytes[index]) }
            return length == 0 ? 0 : prefix << UInt64(8 * (8 - length))
        }
    }
}
