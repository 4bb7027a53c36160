import MappedKVFormat

// Counters: a key whose payload is one `Int64` varint and nothing else (the encoding of an
// `Int64` value, docs/FORMAT.md 2.5), added to by `increment`. The invariants: an increment reads
// and appends under the caller's exclusive section, so concurrent increments in any process never
// lose a count; a counter's expiry time is set once, when the increment creates it, and every
// later increment writes the same time again (a fixed window, not a sliding one); and a payload
// that is not exactly one varint, or a sum past `Int64`'s range, throws and writes nothing.
extension StoreCore {
    /// What `key` holds, seen by an increment.
    enum CounterState: Equatable {
        /// Nothing live: absent, or expired.
        case absent
        /// A counter, and the expiry time of its record when key expiry is on (0: never).
        case counter(Int64, expiresAt: UInt32?)
        /// A value that is not a counter.
        case other
    }

    /// What `key` holds now, for an increment.
    func counterState(forKey key: String) throws(MappedKVError) -> CounterState {
        try prepareRead()
        let now = configuration.clock.now()
        return loaded.mirror.withUnsafeBytes { bytes in
            guard let slot = Self.withBytes(of: key, { loaded.index.slot(for: $0, in: bytes) }) else { return .absent }
            let whole = UnsafeRawBufferPointer(rebasing: bytes[slot.valueRange])
            var payload = whole
            var expiresAt: UInt32? = nil
            if loaded.expiryEnabled, let time = ExpirySuffix.time(of: whole) {
                if ExpirySuffix.isExpired(time, now: now) { return .absent }
                payload = UnsafeRawBufferPointer(rebasing: whole.dropLast(ExpirySuffix.length))
                expiresAt = time
            }
            guard let value = try? Int64(payload: payload) else { return .other }
            return .counter(value, expiresAt: expiresAt)
        }
    }

    /// Adds `delta` to the counter under `key` and returns the sum; a key that holds nothing live
    /// becomes a counter of `delta` expiring `window` seconds from now (nil: the store's default).
    /// The caller holds the exclusive section.
    func increment(_ key: String, by delta: Int64, window: UInt32?) throws(MappedKVError) -> Int64 {
        switch try counterState(forKey: key) {
        case .other:
            throw .notACounter(key: key)
        case .absent:
            try set(delta, forKey: key, expiresAfter: window)
            return delta
        case .counter(let value, let expiresAt):
            let (sum, overflow) = value.addingReportingOverflow(delta)
            guard !overflow else { throw .counterOverflow(key: key, value: value, delta: delta) }
            var payload: [UInt8] = []
            sum.encodePayload(into: &payload)
            // The batch path writes an expiry time as it is, where a set would count one from now.
            try setPayloads([BatchEntry(key: key, payload: payload, expiry: expiresAt ?? ExpirySuffix.never)])
            return sum
        }
    }
}
