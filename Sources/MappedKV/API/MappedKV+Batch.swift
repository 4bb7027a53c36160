// Several keys in one write (MMKV's `removeValuesForKeys` and `importFrom`): the records of a
// batch are appended together and the meta's CRC and size stored once, so a reader in any
// process sees all of the batch or none of it (docs/FORMAT.md 2.7).
extension MappedKV {
    /// Removes every key of `keys` in one write; absent keys are skipped. A reader in another
    /// process sees all of them removed or none.
    ///
    /// ```swift
    /// let dir = FileManager.default.temporaryDirectory.appendingPathComponent("kv-batch").path
    /// let store = try MappedKV(id: "session", directory: dir)
    /// try store.set("t", forKey: "token")
    /// try store.set("u", forKey: "user")
    /// try store.removeValues(forKeys: ["token", "user"])
    /// ```
    ///
    /// - Returns: how many keys were present and removed.
    @discardableResult
    public func removeValues(forKeys keys: [String]) throws(MappedKVError) -> Int {
        metrics?.countRemove()
        return try withCore { (core) throws(MappedKVError) -> Int in try core.removeValues(forKeys: keys) }
    }

    /// Copies every live key of `source` into this store in one write, replacing keys both have
    /// (MMKV's `importFrom`). Values keep their payload bytes. If both stores have key expiry on,
    /// each value keeps its expiry time; if only this one has, imported values get its default
    /// lifetime; if this one has not, expiry times are dropped. Expired keys are not imported.
    ///
    /// - Returns: how many keys were imported (0 when `source` is this store's own files).
    @discardableResult
    public func importEntries(from source: MappedKV) throws(MappedKVError) -> Int {
        guard source.shared !== shared else { return 0 }
        let entries = try source.withCore { (core) throws(MappedKVError) -> [StoreCore.BatchEntry] in
            try core.exportEntries()
        }
        try withCore { (core) throws(MappedKVError) in try core.setPayloads(entries) }
        return entries.count
    }
}
