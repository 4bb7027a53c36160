import MappedKV
import MappedKVFormat

// Several keys in one call: a batched read, a batched removal and the removal of every value
// above a size (YYDiskCache's removeItemsLargerThanSize). The invariants are the single-key
// calls': a read serves bytes only when their length and CRC are the recorded ones (anything else
// is a miss, and the entry is dropped if its record is still the one read); every key is checked
// before anything is read or changed; and a removal is one exclusive section and one manifest
// append, so another process sees all of its keys removed or none.

extension DiskCache {
    /// The values of those of `keys` that hit, by key; a miss is left out.
    ///
    /// Each key is served as ``value(forKey:)`` serves it: an expired entry is a miss, and an entry
    /// whose bytes are not the recorded ones is a miss and is dropped, never wrong bytes. The
    /// records are read in one call on the manifest, so they all come from one state of it; value
    /// files are then read and checked one at a time. Each hit counts as an access for the LRU
    /// order. A key given more than once is looked up once.
    ///
    /// - Throws: ``CacheError/invalidKey(reason:)`` for the first unusable key, before anything
    ///   is read.
    public func values(forKeys keys: [String]) throws(CacheError) -> [String: [UInt8]] {
        try lookUp(keys).mapValues(\.value)
    }

    /// The hits among `keys` with their metadata (no extended data), served and counted as
    /// ``values(forKeys:)`` describes.
    func lookUp(_ keys: [String]) throws(CacheError) -> [String: ManifestLookup.Found] {
        let keys = try Self.validatedUnique(keys)
        let now = clock.now()
        var storeKeys = PackedKeys(reservingCapacity: keys.count, bytesPerKey: 32)
        Self.entryPrefix.withUnsafeBytes { prefix in
            for key in keys { storeKeys.append(prefix, key) }
        }
        // Judged where the records lie, as a single read does; nil for an absent key.
        var lookups = [ManifestLookup?](repeating: nil, count: keys.count)
        var notBytes = Set<Int>()
        try manifestCall { () throws(MappedKVError) in
            try manifest.withPayloads(forKeys: storeKeys) { position, payload in
                guard let payload else { return }
                guard let record = ManifestPayload.bytesInPlace(payload) else {
                    notBytes.insert(position)
                    return
                }
                lookups[position] = ManifestLookup(record, at: now, withExtendedData: false)
            }
        }
        var found: [String: ManifestLookup.Found] = [:]
        found.reserveCapacity(keys.count)
        for (position, key) in keys.enumerated() {
            if notBytes.contains(position) {
                // No cache writes such a payload: the single read reports it, and is the model here.
                if let hit = try lookUp(key, withExtendedData: false) { found[key] = hit }
                continue
            }
            switch lookups[position] {
            case nil:
                continue
            case .inline(let hit):
                found[key] = hit
            case .file(let raw):
                guard let record = CacheEntryRecord(decoding: raw), let name = record.fileName,
                    let bytes = try files.read(name, expecting: record)
                else {
                    try drop(key, ifStill: raw)
                    continue
                }
                found[key] = ManifestLookup.Found(
                    value: bytes, modified: record.modified, expiry: record.expiry, extendedData: nil)
            case .unusable(let raw):
                try drop(key, ifStill: raw)
                continue
            }
            noteAccess(key, at: now)
        }
        if let metrics {
            // The keys of `notBytes` went through the single read, which counted them.
            let hits = found.count - notBytes.count(where: { found[keys[$0]] != nil })
            metrics.countDisk(hits: hits, misses: keys.count - notBytes.count - hits)
        }
        return found
    }

    /// Removes the entries of `keys` and their files; absent keys are not an error.
    ///
    /// The records go in one exclusive section and one manifest append, so another process sees
    /// all of them removed or none; the files are deleted afterwards.
    ///
    /// - Throws: ``CacheError/invalidKey(reason:)`` for the first unusable key, before anything
    ///   is changed.
    public func removeValues(forKeys keys: [String]) throws(CacheError) {
        let keys = try Self.validatedUnique(keys)
        guard !keys.isEmpty else { return }
        let names = try exclusively { transaction -> [String] in
            let counts = try countsBeforeWrite(in: transaction)
            var delta = CacheCounts(count: 0, bytes: 0)
            var names: [String] = []
            var removals: [String] = []
            removals.reserveCapacity(keys.count * 2)
            for key in keys {
                let entryKey = Self.entryKey(key)
                if let old = try Self.summary(ofEntry: entryKey, in: transaction) {
                    if let name = old.fileName { names.append(name) }
                    delta.count -= 1
                    delta.bytes -= old.size
                }
                removals.append(entryKey)
                removals.append(Self.accessKey(key))
            }
            try manifest.removeValues(forKeys: removals)  // one append; absent keys are skipped
            _ = try account(delta, after: counts)
            return names
        }
        for name in names { files.remove(name) }
        CacheChangeHub.post(.keys(keys), in: hubChannel)
    }

    /// Removes every entry whose value is larger than `bytes` (YYDiskCache's
    /// `removeItemsLargerThanSize`), expired or not, with its file.
    ///
    /// The entries are chosen and removed in one exclusive section and one manifest append;
    /// the files are deleted afterwards. A record that does not decode has no size to compare and
    /// is left to ``trim()``.
    ///
    /// - Returns: the entries removed and their value bytes (``DiskCacheTrimReport/removedEntries``
    ///   and ``DiskCacheTrimReport/removedBytes``; the other counts are 0).
    /// - Throws: ``CacheError/invalidArgument(reason:)`` if `bytes` is negative.
    @discardableResult
    public func removeValues(largerThan bytes: Int) throws(CacheError) -> DiskCacheTrimReport {
        guard bytes >= 0 else { throw .invalidArgument(reason: "a size of \(bytes) bytes is negative") }
        let (report, names, keys) = try exclusively { transaction -> (DiskCacheTrimReport, [String], [String]) in
            let counts = try countsBeforeWrite(in: transaction)
            var keys: [String] = []
            var report = DiskCacheTrimReport()
            var names: [String] = []
            var removals: [String] = []
            try transaction.forEachRawEntryInPlace { storeKey, payload in
                guard storeKey.count > 2, storeKey[0] == UInt8(ascii: "e"), storeKey[1] == UInt8(ascii: ":"),
                    let record = ManifestPayload.bytesInPlace(payload),
                    let summary = CacheEntryRecord.summary(of: record), summary.size > bytes
                else { return }
                let key = String(decoding: UnsafeRawBufferPointer(rebasing: storeKey[2...]), as: UTF8.self)
                keys.append(key)
                removals.append(Self.entryKey(key))
                removals.append(Self.accessKey(key))
                if let name = summary.fileName { names.append(name) }
                report.removedEntries += 1
                report.removedBytes += summary.size
            }
            if !removals.isEmpty { try manifest.removeValues(forKeys: removals) }
            _ = try account(CacheCounts(count: -report.removedEntries, bytes: -report.removedBytes), after: counts)
            return (report, names, keys)
        }
        for name in names { files.remove(name) }
        if !keys.isEmpty { CacheChangeHub.post(.keys(keys), in: hubChannel) }
        logger.debug(
            "removed the values larger than a size",
            metadata: ["bytes": "\(bytes)", "removed": "\(report.removedEntries)"])
        return report
    }

    /// The UTF-8 bytes every entry key starts with.
    static let entryPrefix: [UInt8] = Array("e:".utf8)

    /// `keys` without repeats, in their first order, once every one of them has been validated.
    static func validatedUnique(_ keys: [String]) throws(CacheError) -> [String] {
        for key in keys { try validate(key) }
        var seen = Set<String>(minimumCapacity: keys.count)
        return keys.filter { seen.insert($0).inserted }
    }
}

extension ManifestPayload {
    /// The bytes of a bytes payload where they lie (docs/FORMAT.md 2.5), or nil if it is not one.
    static func bytesInPlace(_ payload: UnsafeRawBufferPointer) -> UnsafeRawBufferPointer? {
        var cursor = ByteCursor(payload)
        guard let length = try? cursor.readVarint64(), length == UInt64(cursor.remaining) else { return nil }
        return UnsafeRawBufferPointer(rebasing: payload[cursor.position...])
    }
}
