import MappedKV

// Counters in a cache directory: an entry whose value is an integer in ASCII decimal digits (so a
// JSON decoder reads it as a number), added to by `increment` under the manifest's exclusive
// section, so that the processes sharing the directory never lose a count. The invariants: the
// expiry is set when the increment creates the entry and written again unchanged by every later
// one (a fixed window); a value that is not such an integer, or a sum past `Int64`, throws and
// leaves the entry as it was. A counter is an entry like any other: the directory's limits may
// evict it, which starts it again from zero.

extension DiskCache {
    /// Adds `delta` to the counter under `key` and returns its new value, atomically across the
    /// threads and processes that share the directory.
    ///
    /// The counter's value is stored as its decimal digits (`"42"`), which ``value(forKey:)``
    /// returns and JSON decoders read as a number. A key with no live entry becomes a counter of
    /// `delta` that expires `window` after this creation (nil: the directory's default time to
    /// live); later increments keep that expiry, so a rate limit's window is fixed from its first
    /// request.
    ///
    /// ```swift
    /// let hits = try cache.increment("rate/203.0.113.9", expiresAfter: .seconds(60))
    /// if hits > 100 { print("too many requests this minute") }
    /// ```
    ///
    /// - Throws: ``CacheError/notACounter(key:)`` if `key` holds a value that is not an integer in
    ///   decimal digits; ``CacheError/counterOverflow(key:)`` if the sum does not fit in an
    ///   `Int64`. Nothing is written in either case.
    public func increment(
        _ key: String, by delta: Int64 = 1, expiresAfter window: Duration? = nil
    ) throws(CacheError) -> Int64 {
        try Self.validate(key)
        return try exclusively { _ in
            let now = clock.now()
            let sum: Int64
            let expiry: UInt64?
            if let current = try lookUp(key, withExtendedData: false) {
                guard let value = Self.counterValue(current.value) else { throw CacheError.notACounter(key: key) }
                let (added, overflow) = value.addingReportingOverflow(delta)
                guard !overflow else { throw CacheError.counterOverflow(key: key) }
                (sum, expiry) = (added, current.expiry)
            } else {
                let lifetime = window ?? defaultTimeToLive
                sum = delta
                expiry = lifetime.map { ttl in
                    let (end, overflow) = now.addingReportingOverflow(ttl.cacheMilliseconds)
                    return overflow ? UInt64.max : end
                }
            }
            try set(
                Array(String(sum).utf8), forKey: key, modified: now, expiry: expiry, extendedData: nil,
                whileRecorded: nil)
            return sum
        }
    }

    /// The integer `bytes` spell in decimal digits (an optional minus sign, then digits), or nil.
    static func counterValue(_ bytes: [UInt8]) -> Int64? {
        guard !bytes.isEmpty, bytes.count <= 20 else { return nil }
        let digits = bytes.first == UInt8(ascii: "-") ? bytes.dropFirst() : bytes[...]
        guard !digits.isEmpty, digits.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) else {
            return nil
        }
        return Int64(String(decoding: bytes, as: UTF8.self))
    }
}
