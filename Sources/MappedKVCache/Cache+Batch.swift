// Several keys in one call on a `Cache`, and the YYCache-style removal by size.
//
// Invariant: the same as the single-key calls: memory answers what it holds once the manifest is
// caught up, the disk side answers the rest in one manifest read, and what is read from disk is
// kept in memory only if no drop of its key raced the read.

extension Cache {
    /// The values of those of `keys` that hit, by key: from memory, else from disk in one manifest
    /// read (each then kept in memory for its remaining lifetime); a miss is left out.
    ///
    /// - Throws: ``CacheError`` from the disk side (an invalid key before anything is read), or
    ///   the serializer's error when stored bytes do not decode (that entry is then removed).
    public func values(forKeys keys: [String]) throws -> [String: Value] {
        try catchUp()
        var found: [String: Value] = [:]
        var missing: [String] = []
        for key in keys where found[key] == nil {
            if let value = memory.value(forKey: key) { found[key] = value } else { missing.append(key) }
        }
        metrics?.countMemory(hits: found.count, misses: missing.count)
        guard !missing.isEmpty else { return found }
        let before = missing.map { invalidations.value(for: $0) }
        let hits = try disk.lookUp(missing)
        for (key, counter) in zip(missing, before) {
            guard let hit = hits[key] else { continue }
            let value = try decodeOrRemove(hit.value, forKey: key)
            found[key] = value
            keep(value, forKey: key, cost: hit.value.count, expiry: hit.expiry)
            if invalidations.value(for: key) != counter { memory.removeValue(forKey: key) }
        }
        return found
    }

    /// Removes the entries of `keys` from both sides, on disk in one manifest append.
    public func removeValues(forKeys keys: [String]) throws(CacheError) {
        for key in keys { observers.tell(CacheEvent(.willRemove, key: key, tier: .both)) }
        try disk.removeValues(forKeys: keys)  // which drops the keys from every memory tier here
        for key in keys { observers.tell(CacheEvent(.didRemove, key: key, tier: .both)) }
    }

    /// Removes every entry whose serialized value is larger than `bytes` from both sides
    /// (YYCache's `removeObjectsLargerThanSize`).
    ///
    /// - Returns: what the disk side removed.
    @discardableResult
    public func removeValues(largerThan bytes: Int) throws(CacheError) -> DiskCacheTrimReport {
        try disk.removeValues(largerThan: bytes)  // which drops the keys from every memory tier here
    }
}
