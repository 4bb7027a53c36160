import MappedKVFormat

// Maintenance: clearing, trimming, rekeying, key expiry on and off, and flushing. Each is a
// whole-file change through the write-back journal (``StoreCore/commit(_:_:staleEnd:sync:)``)
// that increments the sequence, so other processes reload rather than decode a tail.
extension StoreCore {
    /// Empties the store: the file returns to its expected capacity (or, `keepingSpace`, keeps
    /// its size, as MMKV's `clearAll(keepSpace: true)`) and the sequence increments.
    func clearAll(keepingSpace: Bool = false) throws(MappedKVError) {
        try writing { (files) throws(MappedKVError) in
            let size = keepingSpace ? max(files.dataFileSize, expectedCapacity) : expectedCapacity
            let isClear = files.dataFileSize == size && loaded.mirror.isEmpty && loaded.index.isEmpty
            guard !isClear || needsRandomIV else { return }
            let newCipher = try freshCipher()
            var newMeta = loaded.meta
            _ = newMeta.update(actualSize: 0, crc: 0, iv: newCipher?.iv, increasesSequence: true)
            if newCipher == nil { newMeta.iv = .zero }  // a plain store keeps no IV (see rewrite)
            // Unlike MMKV, the old records do not stay readable in the first page: the commit zeroes them.
            let journal = WriteBackJournal(
                base: files.metaStamp(), fileSize: UInt64(size), meta: newMeta, region: [])
            try commit(files, journal, staleEnd: loaded.mirror.count, sync: true)
            loaded.meta = newMeta
            if let newCipher { loaded.cipher = newCipher.stream }
            loaded.mirror = []
            loaded.index.removeAll()
            loaded.recordCount = 0
            logger.debug("cleared store", metadata: ["id": "\(location.id)", "sequence": "\(loaded.meta.sequence)"])
        }
    }

    /// Compacts the store and shrinks its file while it is more than twice the size it needs.
    func trim() throws(MappedKVError) {
        try writing { (files) throws(MappedKVError) in
            if loaded.mirror.isEmpty || loaded.index.isEmpty { return try clearAll() }
            guard files.dataFileSize > expectedCapacity else { return }
            let currentSize = files.dataFileSize
            let minimum = expectedCapacity
            let page = pageSize
            try rewrite(files, needSync: true) { length in
                FileSizePolicy.sizeAfterTrim(
                    fileSize: currentSize, actualSize: length, minimum: minimum, pageSize: page)
            }
        }
    }

    /// Re-encrypts the store under `newKey` (nil: decrypts it to plain text) with a full write-back:
    /// a fresh IV and an incremented sequence. On failure before anything is written, the old key stays.
    func rekey(to newKey: CryptKey?) throws(MappedKVError) {
        try writing { (files) throws(MappedKVError) in try rekey(files, to: newKey) }
    }

    private func rekey(_ files: StoreFiles, to newKey: CryptKey?) throws(MappedKVError) {
        let oldKey = cryptKey
        let oldCipher = loaded.cipher
        cryptKey = newKey
        if newKey == nil { loaded.cipher = nil }
        let currentSize = files.dataFileSize
        do {
            try rewrite(files, needSync: true) { _ in currentSize }
        } catch {
            if !isClosedAfterFailure {
                cryptKey = oldKey
                loaded.cipher = oldCipher
            }
            throw error
        }
        logger.debug("rekeyed store", metadata: ["id": "\(location.id)", "encrypted": "\(newKey != nil)"])
    }

    /// Turns key expiry on, as MMKV's `enableAutoKeyExpire`: every value gets a 4-byte expiry
    /// time, and `defaultDuration` seconds applies to values set without one (0: never).
    func enableKeyExpiry(defaultDuration: UInt32) throws(MappedKVError) {
        try writing { (files) throws(MappedKVError) in
            try changeKeyExpiry(files, enabled: true, defaultDuration: defaultDuration)
        }
    }

    /// Turns key expiry off, as MMKV's `disableAutoKeyExpire`: the suffixes are removed.
    func disableKeyExpiry() throws(MappedKVError) {
        try writing { (files) throws(MappedKVError) in
            try changeKeyExpiry(files, enabled: false, defaultDuration: 0)
        }
    }

    /// Sets the expiry flag: an empty new store only changes its meta, any other store is
    /// rewritten. Both increment the sequence and set the meta version to exactly 4.
    private func changeKeyExpiry(_ files: StoreFiles, enabled: Bool, defaultDuration: UInt32) throws(MappedKVError) {
        defer { if loaded.expiryEnabled { defaultExpiryDuration = defaultDuration } }
        guard enabled != loaded.expiryEnabled else { return }
        var flags = loaded.meta.flags
        if enabled { flags.insert(.keyExpiry) } else { flags.remove(.keyExpiry) }
        if files.dataFileSize == expectedCapacity && loaded.mirror.isEmpty {
            var newMeta = loaded.meta
            _ = newMeta.update(actualSize: 0, crc: 0, increasesSequence: true)
            newMeta.flags = flags
            newMeta.version = .flag
            let journal = WriteBackJournal(
                base: files.metaStamp(), fileSize: UInt64(files.dataFileSize), meta: newMeta, region: [])
            try commit(files, journal, staleEnd: 0, sync: true)
            loaded.meta = newMeta
            loaded.expiryEnabled = enabled
        } else {
            let transform: ValueTransform =
                enabled
                ? .addExpiry(configuration.clock.expiration(after: defaultDuration))
                : .removeExpiry
            try writeBack(files, incomingLength: 0, needSync: true, transform: transform, flags: flags)
        }
        logger.debug("key expiry changed", metadata: ["id": "\(location.id)", "enabled": "\(enabled)"])
    }

    /// Removes the keys whose values have expired from the index (their records are then dead).
    func dropExpiredKeys() {
        let now = configuration.clock.now()
        var expired: [ValueSlot] = []
        loaded.mirror.withUnsafeBytes { bytes in
            loaded.index.forEachSlot(in: bytes) { slot in
                if liveValueRange(slot, now: now) == nil { expired.append(slot) }
            }
        }
        loaded.withMirrorAndIndex { bytes, index in
            for slot in expired { index.remove(keyOf: slot, in: bytes) }
        }
    }
}
