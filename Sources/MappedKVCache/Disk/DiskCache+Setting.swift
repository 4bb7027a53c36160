import MappedKV
import MappedKVFormat
import MappedKVIO

// Setting a value. The invariants: a value file is renamed into place and recorded under the
// manifest's exclusive lock, so every file is either recorded or an orphan that trim collects;
// and the totals move with the records, in the same locked call, so they count exactly the
// entries the manifest holds (but for a process killed between the two, see CacheTotals.swift).
// An inline value, the common case, costs one store call: the record it replaces is seen, the
// new one is written straight into the manifest and the totals are updated under its locks.

extension DiskCache {
    /// Stores `value` under `key`, replacing any previous value.
    ///
    /// - Parameters:
    ///   - value: the bytes to store.
    ///   - key: the entry's key.
    ///   - timeToLive: after this long the entry is a miss and trim removes it; nil never expires.
    ///   - extendedData: bytes kept with the entry and returned by ``entry(forKey:)``.
    ///
    /// A nil `timeToLive` takes ``DiskCacheConfiguration/defaultTimeToLive``.
    public func set(
        _ value: [UInt8], forKey key: String, timeToLive: Duration? = nil, extendedData: [UInt8]? = nil
    ) throws(CacheError) {
        try set(value, forKey: key, timeToLive: timeToLive, extendedData: extendedData, whileRecorded: nil)
    }

    /// ``set(_:forKey:timeToLive:extendedData:)``, calling `whileRecorded` once the record is in
    /// the manifest, before its exclusive lock is released (so calls from concurrent sets of the
    /// key run in the order of their records), and telling the change to every cache of this
    /// process on the directory but the listener `excluded`.
    func set(
        _ value: [UInt8], forKey key: String, timeToLive: Duration?, extendedData: [UInt8]?,
        whileRecorded: (() -> Void)?, excluding excluded: UInt64? = nil
    ) throws(CacheError) {
        let timeToLive = timeToLive ?? defaultTimeToLive
        let now = clock.now()
        let expiry = timeToLive.map { ttl in
            let (expiry, overflow) = now.addingReportingOverflow(ttl.cacheMilliseconds)
            return overflow ? UInt64.max : expiry  // a time to live too long to express: never
        }
        try set(
            value, forKey: key, modified: now, expiry: expiry, extendedData: extendedData,
            whileRecorded: whileRecorded, excluding: excluded)
    }

    /// ``set(_:forKey:timeToLive:extendedData:)`` with the expiry time itself (milliseconds by
    /// the cache's clock; nil never), for a write that keeps an entry's expiry as it was.
    func set(
        _ value: [UInt8], forKey key: String, modified now: UInt64, expiry: UInt64?, extendedData: [UInt8]?,
        whileRecorded: (() -> Void)?, excluding excluded: UInt64? = nil
    ) throws(CacheError) {
        try Self.validate(key)
        guard value.count <= RecordLimits.maximumValueLength / 2 else {
            throw .invalidArgument(reason: "a value of \(value.count) bytes is too large for the cache")
        }
        let crc = value.withUnsafeBytes { CRC32.update(0, $0) }
        let inline = value.count <= inlineThreshold
        let name = inline ? nil : FileNames.random()
        let hook = hasFaultHook.load(ordering: .relaxed) ? faultHook.withLock { $0 } : nil
        let halfway = hook.map { hook in { hook(.writingTemporaryFile) } }
        let temporary = inline ? nil : try files.writeTemporary(value, halfway: halfway)
        let replaced: String?
        let overLimits: Bool
        if let temporary, let name {
            let record = CacheEntryRecord(
                size: value.count, crc: crc, modified: now, expiry: expiry, extendedData: extendedData,
                location: .file(name: name))
            do {
                (replaced, overLimits) = try setFileRecord(
                    record, forKey: key, installing: temporary, as: name, whileRecorded: whileRecorded, hook: hook)
            } catch {
                files.removeTemporary(temporary)
                throw error
            }
        } else {
            (replaced, overLimits) = try setInlineRecord(
                value, crc: crc, modified: now, expiry: expiry, extendedData: extendedData, forKey: key,
                whileRecorded: whileRecorded, hook: hook)
        }
        if let replaced, replaced != name { files.remove(replaced) }
        if overLimits { trimSoon() }
        CacheChangeHub.post(.keys([key]), in: hubChannel, excluding: excluded)
    }

    /// Records the inline `value` and its fields under `key` in one store call that sees the
    /// record it replaces, writes the new one in place and updates the totals, all under the
    /// manifest's locks; returns the file the replaced record named, if any, and whether the
    /// totals now break the count or byte limit.
    private func setInlineRecord(
        _ value: [UInt8], crc: UInt32, modified: UInt64, expiry: UInt64?, extendedData: [UInt8]?,
        forKey key: String, whileRecorded: (() -> Void)?, hook: (@Sendable (CacheFaultPoint) -> Void)?
    ) throws(CacheError) -> (replaced: String?, overLimits: Bool) {
        // Borrowed from `self` with no retain or release (`self` holds both for longer), rather than
        // captured by the closures below: captured through `self`, they cost the most, since the
        // cache is weakly referenced (by its trim tasks) and an object with weak references is
        // retained and released through a side table; captured as locals, each was retained and
        // released twice (the cache bench's disk_set).
        let manifest = Unmanaged.passUnretained(self.manifest)
        let totals = Unmanaged.passUnretained(self.totals)
        let size = value.count
        let length = CacheEntryRecord.inlineLength(
            size: size, modified: modified, expiry: expiry, extendedData: extendedData)
        // Mapped now, so that the totals' update under the manifest's locks cannot fail.
        try self.totals.map()
        var old: (size: Int, fileName: String?)?
        var updated: CacheCounts?
        // The record is encoded into a temporary buffer (on the stack when small) before the
        // store's lock is taken; under it, `writing` only copies those bytes into the append.
        let failure = withUnsafeTemporaryAllocation(byteCount: length, alignment: 1) { buffer in
            let written = value.withUnsafeBytes { value in
                CacheEntryRecord.encodeInline(
                    value, crc: crc, modified: modified, expiry: expiry, extendedData: extendedData, into: buffer)
            }
            let encoded = UnsafeRawBufferPointer(rebasing: buffer[..<written])
            return Self.withEntryKeyBytes(key) { entryKey -> MappedKVError? in
                manifest._withUnsafeGuaranteedRef { manifest -> MappedKVError? in
                    do throws(MappedKVError) {
                        try manifest.replaceBytes(
                            forKeyBytes: entryKey, length: encoded.count,
                            examining: { current in old = current.flatMap(CacheEntryRecord.summary(of:)) },
                            writing: { target in target.copyMemory(from: encoded) },
                            recorded: {
                                whileRecorded?()
                                hook?(.recordedBeforeUnlocking)
                                let delta = CacheCounts(count: old == nil ? 1 : 0, bytes: size - (old?.size ?? 0))
                                updated = totals._withUnsafeGuaranteedRef { $0.add(delta) }
                            })
                        return nil
                    } catch {
                        return error
                    }
                }
            }
        }
        if let failure { throw .store(failure) }
        // Totals not taken from the manifest yet: counted now, with the new record in.
        let counts: CacheCounts
        if let updated { counts = updated } else { counts = try currentCounts() }
        metrics?.record(counts)
        return (old?.fileName, exceedsLimits(counts))
    }

    /// Installs the value file written at `temporary` as `files/<name>` and records `record` under
    /// `key`, in one exclusive section of the manifest; returns the file the replaced record named,
    /// if any, and whether the totals now break the count or byte limit.
    private func setFileRecord(
        _ record: CacheEntryRecord, forKey key: String, installing temporary: String, as name: String,
        whileRecorded: (() -> Void)?, hook: (@Sendable (CacheFaultPoint) -> Void)?
    ) throws(CacheError) -> (replaced: String?, overLimits: Bool) {
        let files = self.files
        let entryKey = Self.entryKey(key)
        let encoded = record.encoded
        return try exclusively { transaction -> (String?, Bool) in
            let counts = try countsBeforeWrite(in: transaction)
            let old = try Self.summary(ofEntry: entryKey, in: transaction)
            try files.install(temporary, as: name)
            unsyncedFiles.withLock { $0.append(name) }
            hook?(.renamedBeforeRecording)
            try transaction.set(encoded, forKey: entryKey)
            whileRecorded?()
            hook?(.recordedBeforeUnlocking)
            let delta = CacheCounts(count: old == nil ? 1 : 0, bytes: record.size - (old?.size ?? 0))
            return (old?.fileName, try account(delta, after: counts))
        }
    }
}

/// Where a crash test may kill a process that is setting a value (see ``DiskCache/setFaultHook(_:)``).
package enum CacheFaultPoint: String, Sendable, CaseIterable {
    /// Half of a value file's temporary file is written.
    case writingTemporaryFile = "writing-temporary-file"
    /// The value file has its final name; the manifest does not record it yet.
    case renamedBeforeRecording = "renamed-before-recording"
    /// The record is in the manifest; the exclusive lock is still held.
    case recordedBeforeUnlocking = "recorded-before-unlocking"
}

extension DiskCache {
    /// Installs a function called at each ``CacheFaultPoint`` of a set, for crash tests (the CLI's
    /// hidden `--crash-at`). Costs a set one relaxed load when none is installed.
    package func setFaultHook(_ hook: (@Sendable (CacheFaultPoint) -> Void)?) {
        faultHook.withLock { $0 = hook }
        hasFaultHook.store(hook != nil, ordering: .relaxed)
    }
}
