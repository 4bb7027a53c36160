// Atomic counters: `increment` adds to an `Int64` value under the store's exclusive section, so
// the processes that share a store count together without losing an update (Redis's INCRBY with
// an expiry set when the counter starts, as rate limits use it). StoreCore+Counters.swift has the
// read and the write; this file has the section around them.

extension MappedKV {
    /// Adds `delta` to the counter under `key` and returns its new value, atomically across the
    /// threads and processes that share the store.
    ///
    /// A counter is a key whose value is an `Int64` (``value(forKey:as:)`` reads it as one). A key
    /// with no live value becomes a counter of `delta`; with `window`, it expires that long after
    /// this creation, and later increments keep that time (a fixed window: a rate limit's count
    /// starts again from zero once the window is over, however busy the key is).
    ///
    /// ```swift
    /// let store = try MappedKV(id: "limits", directory: dir, configuration: Configuration(
    ///     isMultiProcess: true, keyExpiry: .zero))
    /// let hits = try store.increment("client:42", expiresAfter: .seconds(60))
    /// if hits > 100 { print("over the limit until the minute is over") }
    /// ```
    ///
    /// - Parameters:
    ///   - key: the counter's key.
    ///   - delta: what to add; may be negative.
    ///   - window: how long a counter created by this call lives (whole seconds, rounded up); nil
    ///     for the store's default. Needs key expiry on (``Configuration/keyExpiry`` or
    ///     ``enableKeyExpiry(defaultDuration:)``).
    /// - Returns: the counter's value after the addition.
    /// - Throws: ``MappedKVError/notACounter(key:)`` if `key` holds a value that is not exactly one
    ///   `Int64`; ``MappedKVError/counterOverflow(key:value:delta:)`` if the sum does not fit in an
    ///   `Int64`; ``MappedKVError/invalidArgument(_:)`` for a `window` on a store without key
    ///   expiry. Nothing is written in any of these cases.
    public func increment(
        _ key: String, by delta: Int64 = 1, expiresAfter window: Duration? = nil
    ) throws(MappedKVError) -> Int64 {
        metrics?.countSet()
        let seconds = window.map(MappedKV.expirySeconds)
        if seconds != nil, !isKeyExpiryEnabled {
            throw .invalidArgument("a counter's window needs key expiry enabled on the store")
        }
        return try exclusively { _ throws(MappedKVError) -> Int64 in
            try withCore { (core) throws(MappedKVError) -> Int64 in
                try core.increment(key, by: delta, window: seconds)
            }
        }
    }
}
