import MappedKV

// Removing a bucket's entries and indexes. The invariant: each removal is one store write (a
// batch, or a single removal), made inside the store's exclusive section after catching up with
// other processes, so a reader in any process, or an open after the writer was killed, sees the
// bucket as it was before or as it is after, never half of it; and this process's indexes change
// in the same section, other processes' when they catch up with the write.
extension Bucket {
    /// Removes every entry of the bucket, with its entries in the indexes, in one write: a reader
    /// in any process, or a process killed halfway, sees all of them or none. The bucket's index
    /// definitions stay, and go on indexing the entries put afterwards.
    ///
    /// - Returns: the number of entries removed.
    @discardableResult
    public func removeAll() throws(CollectionError) -> Int {
        let name = self.name
        let removed = try indexes.inSection { (transaction) throws(CollectionError) -> Int in
            let keys = try BucketCount.entryKeys(of: name, transaction)
            guard !keys.isEmpty else { return 0 }
            try BucketCount.write(store) { (batch) throws(MappedKVError) in
                for key in keys { try batch.removeValue(forKey: key) }
                try BucketCount.record(0, bucket: name, on: batch)
            }
            indexes.state.withLock { state in
                if let set = state.buckets[ExactString(name)] { state.buckets[ExactString(name)] = set.emptied() }
                state.changes &+= 1
            }
            publishChanges { bucketKeys(ofStoreKeys: keys).map { .remove(key: $0) } }
            return keys.count
        }
        forgetAll()
        return removed
    }

    /// Removes the index `name` (stored or declared by a closure): its stored definition goes, in
    /// one write, so that no process maintains or lists it any more (each drops it when it next
    /// catches up with the store). The entries stay.
    ///
    /// - Throws: ``CollectionError/unknownIndex(bucket:name:)`` if the bucket has no such index.
    public func removeIndex(_ name: String) throws(CollectionError) {
        let bucket = self.name
        try indexes.inSection { (transaction) throws(CollectionError) in
            let isClosure = indexes.state.withLock { state -> Bool? in
                guard let set = state.buckets[ExactString(bucket)], set.indexes[name] != nil else { return nil }
                return set.closures[name] != nil
            }
            guard let isClosure else { throw .unknownIndex(bucket: bucket, name: name) }
            if !isClosure {
                do throws(MappedKVError) {
                    try transaction.removeValue(forKey: CollectionKey.definitionKey(bucket: bucket, name: name))
                } catch {
                    throw .store(error)
                }
            }
            indexes.state.withLock { state in state.removeIndex(name, of: bucket) }
        }
    }
}
