import MappedKV
import MappedKVFormat

// Reading a value. The invariant: bytes are returned only when their length and CRC are the
// recorded ones, so a missing, short or changed file, or a damaged record, is a miss (and the
// entry is dropped), never wrong bytes. A live inline value is checked where it lies in the
// manifest's memory and copied once, into the array returned.

extension DiskCache {
    /// The value of `key`, or nil on a miss. A hit counts as an access for the LRU order.
    public func value(forKey key: String) throws(CacheError) -> [UInt8]? {
        try Self.validate(key)
        let now = clock.now()
        // The steady state, a live inline value: checked where it lies and copied once, with no
        // lookup result built around it (the cache bench's disk_get). Any
        // other record takes the long way, which reads files and drops what cannot be served.
        var served: [UInt8]?
        var needsLookUp = false
        try withManifestRecord(forKey: key) { raw in
            guard let raw else { return }
            if let (value, crc) = CacheEntryRecordView.liveInlineValue(in: raw, at: now), CRC32.update(0, value) == crc
            {
                served = Array(value)
            } else {
                needsLookUp = true
            }
        }
        // Consumed, not copied out of the variable the closure wrote: a copy was retained and
        // released around the access note.
        if let served = consume served {
            noteAccess(key, at: now)
            metrics?.countDisk(hits: 1, misses: 0)
            return served
        }
        guard needsLookUp else {
            metrics?.countDisk(hits: 0, misses: 1)
            return nil
        }
        return try lookUp(key, withExtendedData: false)?.value
    }

    /// The entry of `key` with its metadata, or nil on a miss.
    public func entry(forKey key: String) throws(CacheError) -> DiskCacheEntry? {
        guard let found = try lookUp(key, withExtendedData: true) else { return nil }
        return DiskCacheEntry(
            key: key, value: found.value, modified: found.modified, expiry: found.expiry,
            extendedData: found.extendedData)
    }

    /// The value of `key` and its metadata (the extended data only if asked for), or nil on a
    /// miss; an entry that cannot be served is dropped. A hit counts as an access.
    func lookUp(_ key: String, withExtendedData: Bool) throws(CacheError) -> ManifestLookup.Found? {
        try Self.validate(key)
        let now = clock.now()
        // The record is judged where it lies in the manifest's memory: an inline value is checked
        // in place and copied once, into the array returned.
        var lookup: ManifestLookup?
        try withManifestRecord(forKey: key) { raw in
            lookup = raw.map { ManifestLookup($0, at: now, withExtendedData: withExtendedData) }
        }
        let found: ManifestLookup.Found
        switch consume lookup {
        case nil:
            metrics?.countDisk(hits: 0, misses: 1)
            return nil
        case .inline(let inline):
            found = inline
        case .file(let raw):
            guard let record = CacheEntryRecord(decoding: raw), let name = record.fileName,
                let bytes = try files.read(name, expecting: record)
            else {
                metrics?.countDisk(hits: 0, misses: 1)
                try drop(key, ifStill: raw)
                return nil
            }
            found = ManifestLookup.Found(
                value: bytes, modified: record.modified, expiry: record.expiry, extendedData: record.extendedData)
        case .unusable(let raw):
            metrics?.countDisk(hits: 0, misses: 1)
            try drop(key, ifStill: raw)
            return nil
        }
        metrics?.countDisk(hits: 1, misses: 0)
        noteAccess(key, at: now)
        return found
    }

    /// Calls `body` with the manifest record of `key` where it lies in the manifest's memory (nil
    /// when there is none), under the manifest's locks. `body` must not call the manifest or keep
    /// the bytes. Inlined: as a call it adds to every get (the cache bench's disk_get).
    @inline(__always)
    private func withManifestRecord(
        forKey key: String, _ body: (UnsafeRawBufferPointer?) -> Void
    ) throws(CacheError) {
        // The manifest is borrowed for the call without a retain or a release: `self` holds it for
        // longer. (Taken into a local that the closure captured, it was retained twice and released
        // twice on every get; captured through `self`, worse: see DiskCache+Setting.swift.)
        let manifest = Unmanaged.passUnretained(self.manifest)
        let failure = Self.withEntryKeyBytes(key) { entryKey -> MappedKVError? in
            manifest._withUnsafeGuaranteedRef { manifest -> MappedKVError? in
                do throws(MappedKVError) {
                    try manifest.withBytes(forKeyBytes: entryKey, body)
                    return nil
                } catch {
                    return error
                }
            }
        }
        if let failure { throw .store(failure) }
    }

    /// Whether `key` has an entry that has not expired (its bytes are not read).
    public func contains(_ key: String) throws(CacheError) -> Bool {
        try Self.validate(key)
        let raw = try manifestCall { () throws(MappedKVError) in
            try manifest.bytes(forKey: Self.entryKey(key))
        }
        guard let raw, let record = CacheEntryRecord(decoding: raw) else { return false }
        return !record.isExpired(at: clock.now())
    }

    /// The value a record describes, if its bytes are exactly the recorded ones.
    func read(_ record: CacheEntryRecord) throws(CacheError) -> [UInt8]? {
        switch record.location {
        case .inline: return record.intactInlineValue
        case .file(let name): return try files.read(name, expecting: record)
        }
    }

    /// Removes the entry of `key` if its record is still `raw` (another process may have replaced
    /// it since it was read), and its file.
    func drop(_ key: String, ifStill raw: [UInt8]) throws(CacheError) {
        let name = try exclusively { transaction -> String?? in
            guard let current = try Self.record(of: key, in: transaction), current.raw == raw else { return nil }
            let counts = try countsBeforeWrite(in: transaction)
            try manifest.removeValues(forKeys: [Self.entryKey(key), Self.accessKey(key)])  // one append
            let delta =
                current.record.map { CacheCounts(count: -1, bytes: -$0.size) } ?? CacheCounts(count: 0, bytes: 0)
            _ = try account(delta, after: counts)
            return .some(current.record?.fileName)
        }
        if case .some(.some(let name)) = name { files.remove(name) }
        if name != nil { CacheChangeHub.post(.keys([key]), in: hubChannel) }
        logger.debug("dropped an entry that cannot be served", metadata: ["key": "\(key)"])
    }
}

/// An entry read from a ``DiskCache``.
public struct DiskCacheEntry: Sendable, Equatable {
    /// The entry's key.
    public var key: String
    /// The value's bytes.
    public var value: [UInt8]
    /// When it was set, in milliseconds since 1970.
    public var modified: UInt64
    /// When it expires, in milliseconds since 1970, or nil.
    public var expiry: UInt64?
    /// The extended data set with it, if any.
    public var extendedData: [UInt8]?
}
