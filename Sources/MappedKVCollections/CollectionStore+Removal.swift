import MappedKV

// Removing a whole bucket. The invariant: the bucket's entries, index definitions and count
// record go in one store write, inside the store's exclusive section, so a reader in any process,
// or an open after the writer was killed, sees the whole bucket or none of it.
extension CollectionStore {
    /// Removes the bucket `name`: its entries, its indexes (their stored definitions, and this
    /// process's closure indexes of it) and its count, in one write. A reader in any process, or
    /// a process killed halfway, sees the whole bucket or nothing of it. Removing a bucket that
    /// has nothing does nothing.
    ///
    /// - Returns: the number of entries removed.
    @discardableResult
    public func removeBucket(_ name: String) throws(CollectionError) -> Int {
        let store = self.store
        let indexes = self.indexes
        return try indexes.inSection { (transaction) throws(CollectionError) -> Int in
            let keys = try BucketCount.entryKeys(of: name, transaction)
            let definitionPrefix = Array(CollectionKey.definitionKey(bucket: name, name: "").utf8)
            var definitions: [String] = []
            do throws(MappedKVError) {
                try transaction.forEachRawEntryInPlace { key, _ in
                    guard key.starts(with: definitionPrefix) else { return }
                    definitions.append(String(decoding: key, as: UTF8.self))
                }
            } catch {
                throw .store(error)
            }
            let countKey = BucketCount.key(bucket: name)
            let hasCount: Bool
            do throws(MappedKVError) { hasCount = try transaction.contains(countKey) } catch { throw .store(error) }
            if !keys.isEmpty || !definitions.isEmpty || hasCount {
                try BucketCount.write(store) { (batch) throws(MappedKVError) in
                    for key in keys + definitions { try batch.removeValue(forKey: key) }
                    try batch.removeValue(forKey: countKey)
                }
            }
            indexes.state.withLock { state in
                if state.buckets[ExactString(name)] != nil { state.buckets[ExactString(name)] = nil }
                state.changes &+= 1
            }
            // The bucket's open change streams: a remove per entry removed.
            indexes.changeFeeds.publish(bucket: name) {
                let prefixLength = CollectionKey.prefix(ofBucket: name).utf8.count
                return keys.map { .remove(key: String(decoding: $0.utf8.dropFirst(prefixLength), as: UTF8.self)) }
            }
            return keys.count
        }
    }
}
