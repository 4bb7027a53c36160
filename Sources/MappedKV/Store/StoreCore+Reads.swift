import MappedKVFormat

// Reads: every value is served from the process-private mirror, found through the index, after
// ``StoreCore/prepareRead()`` made the state current. In the steady state a read costs a stamp
// comparison, a hash lookup and a decode. A value whose expiry suffix is in the past is absent.
extension StoreCore {
    /// Every live key, in no particular order (the API layer sorts them).
    func allKeys() throws(MappedKVError) -> [String] {
        try prepareRead()
        let now = loaded.expiryEnabled ? configuration.clock.now() : 0
        return loaded.mirror.withUnsafeBytes { bytes in
            var keys: [String] = []
            keys.reserveCapacity(loaded.index.count)
            loaded.index.forEachSlot(in: bytes) { slot in
                if liveValueRange(slot, now: now) != nil {
                    keys.append(String(decoding: bytes[slot.keyRange], as: UTF8.self))
                }
            }
            return keys
        }
    }

    /// The number of live keys.
    func count() throws(MappedKVError) -> Int {
        if mappedReads.isActive, let count = try countMapped() { return count }
        try prepareRead()
        guard loaded.expiryEnabled else { return loaded.index.count }
        let now = configuration.clock.now()
        var live = 0
        loaded.mirror.withUnsafeBytes { bytes in
            loaded.index.forEachSlot(in: bytes) { slot in if liveValueRange(slot, now: now) != nil { live += 1 } }
        }
        return live
    }

    /// Whether `key` is live.
    func contains(_ key: String) throws(MappedKVError) -> Bool {
        if mappedReads.isActive, case .success(let found)? = try readMapped(forKey: key, { _, range in range != nil }) {
            return found
        }
        try prepareRead()
        return liveValueRange(forKey: key) != nil
    }

    /// Decodes the value of `key` as `V`, or returns nil if the key is absent.
    @inline(__always)
    func value<V: PayloadCodable>(forKey key: String, as type: V.Type) throws(MappedKVError) -> V? {
        if mappedReads.isActive {
            let read = try readMapped(forKey: key) { (region, range) throws(FormatError) -> V? in
                try range.map { (range) throws(FormatError) in
                    try V(payload: UnsafeRawBufferPointer(rebasing: region[range]))
                }
            }
            switch read {
            case nil: break
            case .success(let value)?: return value
            case .failure(let error)?:
                throw .valueDecodingFailed(key: key, type: "\(V.self)", reason: error.description)
            }
        }
        try prepareRead()
        // The lookup and the decode in one borrow of the mirror: each `withUnsafeBytes` of the
        // stored array retains and releases it, two atomic operations.
        let decoded = loaded.mirror.withUnsafeBytes { bytes -> Result<V, FormatError>? in
            guard let range = liveValueRange(forKey: key, in: bytes) else { return nil }
            return Result { () throws(FormatError) in try V(payload: UnsafeRawBufferPointer(rebasing: bytes[range])) }
        }
        switch decoded {
        case nil: return nil
        case .success(let value): return value
        case .failure(let error):
            throw .valueDecodingFailed(key: key, type: "\(V.self)", reason: error.description)
        }
    }

    /// Calls `body` with the bytes of the bytes value of `key` where they lie in the mirror, or
    /// returns nil if the key is absent; the buffer is valid only during the call.
    @inline(__always)
    func withBytes<R>(forKey key: String, _ body: (UnsafeRawBufferPointer) -> R) throws(MappedKVError) -> R? {
        if mappedReads.isActive {
            // The bytes are copied before `body` sees them: a torn read is then found (and read
            // again) before anything of it leaves this function.
            let read = try readMapped(forKey: key, Self.copiedBytesValue)
            switch read {
            case nil: break
            case .success(let bytes)?: return bytes.map { $0.withUnsafeBytes(body) }
            case .failure(let error)?:
                throw .valueDecodingFailed(key: key, type: "[UInt8]", reason: error.description)
            }
        }
        try prepareRead()
        guard let range = liveValueRange(forKey: key) else { return nil }
        do {
            return try loaded.mirror.withRawBytes { (bytes) throws(FormatError) -> R in
                var cursor = ByteCursor(UnsafeRawBufferPointer(rebasing: bytes[range]))
                let length = try cursor.readLength()
                return body(try cursor.readBytes(length))
            }
        } catch {
            throw .valueDecodingFailed(key: key, type: "[UInt8]", reason: error.description)
        }
    }

    /// Calls `body` with the stored payload bytes of `key` where they lie in the mirror, or with
    /// nil if the key is absent: ``payload(forKey:)`` without the copy.
    func withPayload(forKey key: String, _ body: (UnsafeRawBufferPointer?) -> Void) throws(MappedKVError) {
        if mappedReads.isActive,
            case .success(let payload)? = try readMapped(
                forKey: key,
                { region, range in
                    range.map { Array(region[$0]) }
                })
        {
            guard let payload else { return body(nil) }
            return payload.withUnsafeBytes { body($0) }
        }
        try prepareRead()
        guard let range = liveValueRange(forKey: key) else { return body(nil) }
        loaded.mirror.withUnsafeBytes { body(UnsafeRawBufferPointer(rebasing: $0[range])) }
    }

    /// The stored payload bytes of `key`, or nil if the key is absent.
    func payload(forKey key: String) throws(MappedKVError) -> [UInt8]? {
        if mappedReads.isActive,
            case .success(let payload)? = try readMapped(
                forKey: key,
                { region, range in
                    range.map { Array(region[$0]) }
                })
        {
            return payload
        }
        try prepareRead()
        guard let range = liveValueRange(forKey: key) else { return nil }
        return Array(loaded.mirror[range])
    }

    /// Every live key with its payload, sorted by key bytes.
    func entries() throws(MappedKVError) -> [(key: String, payload: [UInt8])] {
        try prepareRead()
        let now = loaded.expiryEnabled ? configuration.clock.now() : 0
        var entries: [(key: [UInt8], payload: [UInt8])] = []
        entries.reserveCapacity(loaded.index.count)
        loaded.mirror.withUnsafeBytes { bytes in
            loaded.index.forEachSlot(in: bytes) { slot in
                if let range = liveValueRange(slot, now: now) {
                    entries.append((Array(bytes[slot.keyRange]), Array(bytes[range])))
                }
            }
        }
        return
            entries
            .sorted { $0.key.lexicographicallyPrecedes($1.key) }
            .map { (key: String(decoding: $0.key, as: UTF8.self), payload: $0.payload) }
    }

    /// The mirror and the key and payload ranges in it of every live entry, in the order of the
    /// records in the file: what a transaction's `forEachEntry` walks after the store's lock is
    /// released, so its body may call the store. The mirror is shared copy-on-write, so a write
    /// during the walk copies the mirror it changes and the walk still sees the entries as they were.
    ///
    /// File order rather than the index's hash order: the walk then reads the mirror forwards, which
    /// the processor prefetches, instead of jumping to a random record each time (at 100,000 keys,
    /// a cache miss per entry costs more than the sort).
    func liveEntries() throws(MappedKVError) -> LiveEntries {
        try prepareRead()
        let now = loaded.expiryEnabled ? configuration.clock.now() : 0
        var ranges: [(key: Range<Int>, payload: Range<Int>)] = []
        ranges.reserveCapacity(loaded.index.count)
        loaded.mirror.withUnsafeBytes { bytes in
            loaded.index.forEachSlotInFileOrder(in: bytes) { slot in
                if let range = liveValueRange(slot, now: now) { ranges.append((slot.keyRange, range)) }
            }
        }
        return LiveEntries(mirror: loaded.mirror, ranges: ranges)
    }

    /// Calls `body` with every live entry's key and payload bytes where they lie in the mirror, in
    /// file order: ``liveEntries()`` without building its list. The caller holds the store's lock
    /// throughout, so `body` must not call the store.
    func forEachLiveEntry(
        _ body: (_ key: UnsafeRawBufferPointer, _ payload: UnsafeRawBufferPointer) -> Void
    ) throws(MappedKVError) {
        try prepareRead()
        let now = loaded.expiryEnabled ? configuration.clock.now() : 0
        loaded.mirror.withUnsafeBytes { bytes in
            loaded.index.forEachSlotInFileOrder(in: bytes) { slot in
                guard let range = liveValueRange(slot, now: now) else { return }
                let key = UnsafeRawBufferPointer(rebasing: bytes[slot.keyRange])
                body(key, UnsafeRawBufferPointer(rebasing: bytes[range]))
            }
        }
    }

    /// A snapshot of the file-level state.
    func info() throws(MappedKVError) -> StoreInfo {
        try prepareRead()
        let holderBytes = Array(loaded.mirror.prefix(holderLength))
        return StoreInfo(
            id: location.id, dataPath: location.dataPath, metaPath: location.metaPath, meta: StoreMeta(loaded.meta),
            fileSize: dataFileSize, actualSize: actualSize, keyCount: try count(), recordCount: loaded.recordCount,
            holder: holderBytes, header: loaded.header)
    }

    /// The length of the item-size holder varint that starts a non-empty region.
    var holderLength: Int {
        loaded.mirror.withUnsafeBytes { ItemSizeHolder.length(in: $0) ?? 0 }
    }

    // MARK: Lookup

    /// Calls `body` with the UTF-8 bytes of `key`, without copying them when the string is native.
    @inline(__always)
    static func withBytes<R>(of key: String, _ body: (UnsafeRawBufferPointer) -> R) -> R {
        if let result = key.utf8.withContiguousStorageIfAvailable({ body(UnsafeRawBufferPointer($0)) }) {
            return result
        }
        return Array(key.utf8).withUnsafeBytes(body)
    }

    /// The slot of `key`, or nil if it is absent.
    @inline(__always)
    func slot(forKey key: String) -> ValueSlot? {
        let slot = loaded.mirror.withUnsafeBytes { bytes in
            Self.withBytes(of: key) { loaded.index.slot(for: $0, in: bytes) }
        }
        if let slot { return slot }
        return loaded.index.repairedCount > 0 ? repairedSlot(forKey: key) : nil
    }

    /// The slot of a key that is not UTF-8 and whose repair is `key` (out of line: the rare path).
    @inline(never)
    private func repairedSlot(forKey key: String) -> ValueSlot? {
        loaded.mirror.withUnsafeBytes { bytes in
            Self.withBytes(of: key) { loaded.index.repairedSlot(for: $0, in: bytes) }
        }
    }

    /// The value bytes of a slot without any expiry suffix, or nil if the value has expired.
    /// A value shorter than the suffix is returned as it is, as MMKV does.
    @inline(__always)
    func liveValueRange(_ slot: ValueSlot, now: UInt32) -> Range<Int>? {
        guard loaded.expiryEnabled else { return slot.valueRange }
        return loaded.mirror.withUnsafeBytes { liveValueRange(slot, now: now, in: $0) }
    }

    /// ``liveValueRange(_:now:)`` of a slot whose record is in `bytes` (the mirror's).
    @inline(__always)
    func liveValueRange(_ slot: ValueSlot, now: UInt32, in bytes: UnsafeRawBufferPointer) -> Range<Int>? {
        let range = slot.valueRange
        guard loaded.expiryEnabled, let time = ExpirySuffix.time(of: UnsafeRawBufferPointer(rebasing: bytes[range]))
        else {
            return range
        }
        return ExpirySuffix.isExpired(time, now: now) ? nil : range.dropLast(ExpirySuffix.length)
    }

    /// The live value range of `key` in `bytes` (the mirror's), or nil if it is absent or expired.
    @inline(__always)
    func liveValueRange(forKey key: String, in bytes: UnsafeRawBufferPointer) -> Range<Int>? {
        // The lookup of slot(forKey:), written out: as a function of its own it is not inlined
        // into a get (`mappedkv bench` get_int32).
        let found = Self.withBytes(of: key) { loaded.index.slot(for: $0, in: bytes) }
        guard let slot = found ?? (loaded.index.repairedCount > 0 ? repairedSlot(forKey: key) : nil) else { return nil }
        guard loaded.expiryEnabled else { return slot.valueRange }
        return liveValueRange(slot, now: configuration.clock.now(), in: bytes)
    }

    /// ``liveValueRange(forKey:in:)`` of a key given as its UTF-8 bytes and their
    /// ``KeyIndex/hash(_:)``.
    @inline(__always)
    func liveValueRange(
        forKey key: UnsafeRawBufferPointer, hash: UInt32, in bytes: UnsafeRawBufferPointer
    ) -> Range<Int>? {
        let found = loaded.index.slot(for: key, hash: hash, in: bytes)
        guard
            let slot = found ?? (loaded.index.repairedCount > 0 ? loaded.index.repairedSlot(for: key, in: bytes) : nil)
        else {
            return nil
        }
        guard loaded.expiryEnabled else { return slot.valueRange }
        return liveValueRange(slot, now: configuration.clock.now(), in: bytes)
    }

    /// The live value range of `key`, or nil if it is absent or expired.
    @inline(__always)
    func liveValueRange(forKey key: String) -> Range<Int>? {
        loaded.mirror.withUnsafeBytes { liveValueRange(forKey: key, in: $0) }
    }
}

/// The live entries of a store at one moment: see ``StoreCore/liveEntries()``.
struct LiveEntries: Sendable {
    /// The plain text the ranges index.
    let mirror: [UInt8]
    /// Each live entry's key bytes and payload bytes in ``mirror``.
    let ranges: [(key: Range<Int>, payload: Range<Int>)]

    /// Calls `body` with every entry's key and payload bytes; both are valid only during the call.
    func forEach(
        _ body: (_ key: UnsafeRawBufferPointer, _ payload: UnsafeRawBufferPointer) throws -> Void
    ) rethrows {
        try mirror.withUnsafeBytes { bytes in
            for (key, payload) in ranges {
                try body(UnsafeRawBufferPointer(rebasing: bytes[key]), UnsafeRawBufferPointer(rebasing: bytes[payload]))
            }
        }
    }
}
