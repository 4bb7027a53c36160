import MappedKV

// Reading a bucket by key a page at a time. The invariant: a page holds the bucket's first keys
// above the key it starts after, in UTF-8 byte order, read from one state of this process's key
// order (itself in step with every write made before the call, by any process). Pages are keyset
// pages: the next one starts after the last key of the previous, not at an offset, so entries put
// or removed between two pages move no other key across the boundary: no key comes twice, and no
// key that was there throughout is skipped.
extension Bucket {
    /// The first `limit` keys of the bucket after `key` (from the first key if nil), in order of
    /// their UTF-8 bytes; `key` need not be in the bucket. A page shorter than `limit` is the
    /// bucket's last.
    ///
    /// The first page asked for in a process orders the bucket's keys in memory (one read of the
    /// store, or none for a bucket with indexes, whose keys are in memory already); from then on
    /// a page costs a walk down a tree and along the page, whatever the bucket's size, and every
    /// put and removal, by any process, keeps the order.
    ///
    /// ```swift
    /// var page = try posts.keys(limit: 100)
    /// while let last = page.last {
    ///     handle(page)
    ///     page = try posts.keys(after: last, limit: 100)
    /// }
    /// ```
    ///
    /// - Throws: ``CollectionError/store(_:)`` with an invalid argument if `limit` is negative.
    public func keys(after key: String? = nil, limit: Int) throws(CollectionError) -> [String] {
        guard limit >= 0 else {
            throw .store(.invalidArgument("a page of keys needs a limit of 0 or more, not \(limit)"))
        }
        guard limit > 0 else { return [] }
        try indexes.synchronize()
        let name = self.name
        let page = indexes.state.withLock { $0.buckets[ExactString(name)]?.keys(after: key, limit: limit) }
        if let page { return page }
        // The keys are not ordered in this process yet: they are, inside the exclusive section,
        // where no write can land before the page is read.
        return try indexes.inSection { (transaction) throws(CollectionError) -> [String] in
            try indexes.orderKeys(of: name, transaction)
            return indexes.state.withLock { $0.buckets[ExactString(name)]?.keys(after: key, limit: limit) } ?? []
        }
    }

    /// The first `limit` entries of the bucket after the key `key` (from the first if nil), in
    /// order of their keys' UTF-8 bytes, as ``keys(after:limit:)`` orders them. An entry removed
    /// between the read of its key and the read of its record is left out, and the page is filled
    /// from the keys after it: a page shorter than `limit` is the bucket's last.
    ///
    /// - Throws: ``CollectionError/store(_:)`` with an invalid argument if `limit` is negative;
    ///   ``CollectionError/malformedEntry(bucket:key:reason:)`` or
    ///   ``CollectionError/decodingFailed(bucket:key:reason:)`` for an entry that cannot be read.
    public func entries(after key: String? = nil, limit: Int) throws(CollectionError) -> [Entry<Value>] {
        guard limit >= 0 else {
            throw .store(.invalidArgument("a page of entries needs a limit of 0 or more, not \(limit)"))
        }
        var entries: [Entry<Value>] = []
        var after = key
        while entries.count < limit {
            let want = limit - entries.count
            let keys = try keys(after: after, limit: want)
            guard let last = keys.last else { break }
            // One store call reads the page's records: every one from one state of the store.
            var storeKeys = PackedKeys(reservingCapacity: keys.count, bytesPerKey: 32)
            var prefix = keyPrefix
            prefix.withUTF8 { head in
                for key in keys { storeKeys.append(UnsafeRawBufferPointer(head), key) }
            }
            let payloads: [[UInt8]?]
            do { payloads = try store.payloads(forKeys: storeKeys) } catch { throw .store(error) }
            for (key, stored) in zip(keys, payloads) {
                guard let stored else {
                    forget(key)
                    continue
                }
                entries.append(try entry(stored: stored, key: key))
            }
            if keys.count < want { break }
            after = last
        }
        return entries
    }

    /// An iterator over the bucket's keys in order of their UTF-8 bytes, reading `pageSize` keys
    /// at a time with ``keys(after:limit:)``: a bucket of any size is walked in memory bounded by
    /// the page, and keys put or removed meanwhile are seen or not as keyset pages see them.
    ///
    /// ```swift
    /// var keys = posts.makeKeyIterator()
    /// while let key = try keys.next() { print(key) }
    /// ```
    public func makeKeyIterator(pageSize: Int = 256) -> BucketKeyIterator<Value> {
        BucketKeyIterator(bucket: self, pageSize: pageSize)
    }

    /// An iterator over the bucket's entries in order of their keys' UTF-8 bytes, reading
    /// `pageSize` entries at a time with ``entries(after:limit:)``.
    ///
    /// ```swift
    /// var entries = posts.makeEntryIterator(pageSize: 50)
    /// while let entry = try entries.next() { print(entry.key, entry.value) }
    /// ```
    public func makeEntryIterator(pageSize: Int = 64) -> BucketEntryIterator<Value> {
        BucketEntryIterator(bucket: self, pageSize: pageSize)
    }
}
