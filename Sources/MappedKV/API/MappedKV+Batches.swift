// Write batches: many sets and removes as one write (docs/FORMAT.md 2.7a). The closure records
// them on a ``MappedKV/WriteBatch``; when it returns they are committed under the store's lock
// taken once, appended together and published with one store of the meta's CRC and size, so a
// reader in any process, or a load after the writer was killed, sees all of the batch or none.
extension MappedKV {
    /// Records the sets and removes `body` makes on its ``WriteBatch`` and, when it returns,
    /// writes them all at once: one lock, one append, one update of the meta. Other processes see
    /// all of the batch or none of it, even if this process is killed while writing it. The later
    /// of two writes to one key wins, as with single calls.
    ///
    /// If `body` throws, nothing is written. If the commit fails (for example, a set with an
    /// expiry on a store without key expiry, or a batch larger than a region can hold), nothing
    /// is written either. Many sets in one batch cost much less per set than separate calls,
    /// above all in multi-process mode, where each separate call takes the file lock.
    ///
    /// ```swift
    /// let dir = FileManager.default.temporaryDirectory.appendingPathComponent("kv-batch").path
    /// let store = try MappedKV(id: "profile", directory: dir)
    /// try store.batch { batch in
    ///     try batch.set("Ada", forKey: "name")
    ///     try batch.set(Int32(36), forKey: "age")
    ///     try batch.removeValue(forKey: "draft")
    /// }
    /// ```
    ///
    /// - Returns: what `body` returns.
    /// - Throws: an error `body` throws, unchanged (same type, same value); the store's own errors
    ///   are ``MappedKVError``s.
    public func batch<R, E: Error>(_ body: (WriteBatch) throws(E) -> R) throws -> R {
        // The buffers of the last batch, emptied, so a warm batch allocates nothing.
        let batch = WriteBatch(operations: try withCore { core in core.takeSpareBatch() })
        let result: R
        do {
            defer { batch.end() }
            result = try body(batch)
        }
        var operations = batch.takeOperations()
        metrics?.countBatch()
        try withCore { (core) throws(MappedKVError) in
            defer { core.keepSpareBatch(&operations) }
            _ = try core.applyBatch(operations)
        }
        return result
    }
}
