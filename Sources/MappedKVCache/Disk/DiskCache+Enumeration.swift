// A walk over every live entry of a disk cache, least recently used first, with the values only
// when asked for (PINDiskCache's enumerateObjectsWithBlock, YYDiskCache's item listing). The
// invariant: a value handed to the caller is exactly the recorded one (its length and CRC
// checked), and the walk changes nothing: no access is counted, nothing is dropped.

extension DiskCache {
    /// Calls `body` for every entry that has not expired, least recently used first (the order of
    /// ``entries()``), with its value's bytes if `includingValues`.
    ///
    /// The entries are those of one state of the manifest, read under its exclusive lock; the
    /// lock is released before `body` is first called, so `body` may use the cache. Without
    /// values, no value is read (``DiskCacheEntryInfo/value`` is nil). With values, each is read
    /// and checked as a get checks it, one at a time, just before its call: an entry whose bytes
    /// are missing or are not the recorded ones (damaged, or replaced or removed by then) is
    /// skipped, never handed over with other bytes. The walk counts no access and drops nothing;
    /// ``verify(repair:)`` finds and drops damaged entries.
    ///
    /// ```swift
    /// try cache.forEachEntry(includingValues: true) { entry in
    ///     print(entry.key, entry.value?.count ?? 0)
    /// }
    /// ```
    ///
    /// - Throws: a ``CacheError`` if the manifest cannot be read, or what `body` throws (which
    ///   ends the walk).
    public func forEachEntry(includingValues: Bool = false, _ body: (DiskCacheEntryInfo) throws -> Void) throws {
        let now = clock.now()
        for entry in try snapshot().entries {
            guard let record = entry.record, !record.isExpired(at: now) else { continue }
            var info = DiskCacheEntryInfo(entry, record: record)
            if includingValues {
                guard let value = try read(record) else { continue }
                info.value = value
            }
            try body(info)
        }
    }
}

extension DiskCacheEntryInfo {
    /// The listing line of a snapshot entry whose record decodes, without its value.
    init(_ entry: CacheSnapshotEntry, record: CacheEntryRecord) {
        self.init(
            key: entry.key, size: record.size, isInline: record.fileName == nil, lastAccess: entry.lastAccess,
            expiry: record.expiry, value: nil)
    }
}
