import MappedKV

// A bucket's change stream. The invariants: a stream made by `changes(bufferLimit:)` receives
// every put and removal of the bucket's entries made after it returns, by this process (pushed by
// the write, inside the store's exclusive section) or by another (named by the records that
// process appended, in their order, as this process notices them); a change it cannot name (a
// store rewritten as a whole, a full buffer) becomes a `resync`, never nothing; and the stream
// holds a store subscription and a place in the hub only until it ends.

extension Bucket {
    /// The changes to this bucket's entries, as they happen: every key put or removed from now
    /// on, by this process or by any other process sharing the store.
    ///
    /// - A ``Bucket/put(_:forKey:metadata:)`` yields ``BucketChange/put(key:)``, a
    ///   ``Bucket/remove(_:)`` that removed something ``BucketChange/remove(key:)``; an
    ///   ``Bucket/importEntries(_:)`` yields a put per entry, and ``Bucket/removeAll()`` or
    ///   ``CollectionStore/removeBucket(_:)`` a remove per entry they removed. Index and count
    ///   records, and other buckets' entries, yield nothing; nor do raw writes this process makes
    ///   through the plain store underneath (``CollectionStore/store``), which no bucket sees.
    /// - This process's writes (through any handle of the store) are yielded in the order they
    ///   were made. Another process's are yielded in the order it made them, when this process
    ///   notices them: in multi-process mode a watcher looks every 10 ms, so they arrive within
    ///   about 10 ms of the write returning (docs/bench/collections.md measures it).
    /// - When another process rewrites the store as a whole (a compaction or a resize among
    ///   them), the keys it changed since this process last looked cannot be named: the stream
    ///   yields ``BucketChange/resync(_:)`` with ``BucketChange/ResyncReason/storeRewritten``.
    /// - At most `bufferLimit` changes (at least 1) wait for the reader. When one more arrives,
    ///   the waiting ones are dropped and a ``BucketChange/resync(_:)`` with
    ///   ``BucketChange/ResyncReason/overflow`` takes their place; the changes after it are
    ///   yielded again. On a resync, re-read what you need of the bucket.
    ///
    /// The stream ends (the loop below finishes) when the store handle the bucket came from is
    /// closed (after the changes already waiting), when the task reading it is cancelled, or
    /// when the stream is released; then it holds no subscription, thread or memory. Read it
    /// from one task: the reader of several iterators of one stream gets each change once, from
    /// whichever asks first.
    ///
    /// ```swift
    /// let watcher = Task {
    ///     for await change in posts.changes() {
    ///         if let key = change.key { print(change, try? posts.value(forKey: key)?.title ?? "(gone)") }
    ///     }
    /// }
    /// // ...
    /// watcher.cancel()
    /// ```
    public func changes(bufferLimit: Int = 10_000) -> BucketChanges {
        let feed = BucketChangeFeed(bucket: name, limit: bufferLimit)
        let hub = indexes.changeFeeds
        let token = hub.add(feed)
        let prefix = feed.keyPrefix
        let observation = store.observeExternalChanges(
            { [weak feed] change in feed?.push(Self.bucketChanges(in: change, prefix: prefix)) },
            end: { [weak feed] in feed?.finish(dropWaiting: false) })
        feed.setTeardown {
            observation.cancel()
            hub.remove(token)
        }
        return BucketChanges(feed: feed)
    }

    /// The changes another process's `change` made to the bucket whose store keys start with `prefix`.
    static func bucketChanges(in change: ExternalChange, prefix: [UInt8]) -> [BucketChange] {
        guard let records = change.records else {
            // No records: the store was rewritten (no keys named), or keys without their kinds.
            let named = change.changedKeys?.contains { $0.utf8.starts(with: prefix) } ?? true
            return named ? [.resync(.storeRewritten)] : []
        }
        var changes: [BucketChange] = []
        for record in records where record.key.utf8.starts(with: prefix) {
            let key = String(decoding: record.key.utf8.dropFirst(prefix.count), as: UTF8.self)
            changes.append(record.removes ? .remove(key: key) : .put(key: key))
        }
        return changes
    }

    /// Pushes this process's `changes` of the bucket to its open streams (called inside the
    /// store's exclusive section, after the write); `make` runs only if a stream is open.
    func publishChanges(_ make: () -> [BucketChange]) {
        indexes.changeFeeds.publish(bucket: name, make)
    }

    /// The bucket keys of the store keys `storeKeys` of this bucket.
    func bucketKeys(ofStoreKeys storeKeys: [String]) -> [String] {
        let count = keyPrefix.utf8.count
        return storeKeys.map { String(decoding: $0.utf8.dropFirst(count), as: UTF8.self) }
    }
}

/// The changes to one bucket, as an asynchronous sequence: made by ``Bucket/changes(bufferLimit:)``,
/// which describes what is yielded and when the sequence ends.
public struct BucketChanges: AsyncSequence, Sendable {
    /// A change to the bucket.
    public typealias Element = BucketChange
    /// The sequence never throws: it ends instead.
    public typealias Failure = Never

    let feed: BucketChangeFeed

    /// Iterates the changes.
    public struct AsyncIterator: AsyncIteratorProtocol, Sendable {
        let feed: BucketChangeFeed

        /// The next change, waiting for one; nil once the sequence has ended.
        public mutating func next() async -> BucketChange? { await feed.next() }
    }

    /// An iterator over the changes (one reader; see ``Bucket/changes(bufferLimit:)``).
    public func makeAsyncIterator() -> AsyncIterator { AsyncIterator(feed: feed) }

    /// Ends the sequence now, as closing the store would: a waiting `next()` returns the changes
    /// already waiting, then nil.
    public func finish() { feed.finish(dropWaiting: false) }
}
