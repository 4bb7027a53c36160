// Iterators that walk a bucket page by page. The invariant: each holds one page and the last key
// it has returned, and the next page starts after that key, so a walk returns every key in order
// at most once, and every key that was in the bucket from the walk's start to its end exactly
// once, whatever is put or removed meanwhile. Their `next()` throws (a page read can fail), so
// they are not `IteratorProtocol` iterators: a walk is `while let key = try iterator.next()`.

/// Walks a bucket's keys in order of their UTF-8 bytes, a page at a time
/// (``Bucket/makeKeyIterator(pageSize:)``).
public struct BucketKeyIterator<Value: Sendable>: Sendable {
    private let bucket: Bucket<Value>
    private let pageSize: Int
    private var page: [String] = []
    private var position = 0
    private var isLastPage = false

    init(bucket: Bucket<Value>, pageSize: Int) {
        self.bucket = bucket
        self.pageSize = pageSize
    }

    /// The next key, or nil after the last.
    ///
    /// - Throws: ``CollectionError/store(_:)`` with an invalid argument if the page size is not
    ///   positive, or the store's error if a page cannot be read.
    public mutating func next() throws(CollectionError) -> String? {
        if position == page.count {
            guard !isLastPage else { return nil }
            guard pageSize > 0 else {
                throw .store(.invalidArgument("a key iterator needs a page size above 0, not \(pageSize)"))
            }
            let after = page.last
            page = try bucket.keys(after: after, limit: pageSize)
            position = 0
            isLastPage = page.count < pageSize
            if page.isEmpty { return nil }
        }
        defer { position += 1 }
        return page[position]
    }
}

/// Walks a bucket's entries in order of their keys' UTF-8 bytes, a page at a time
/// (``Bucket/makeEntryIterator(pageSize:)``).
public struct BucketEntryIterator<Value: Sendable>: Sendable {
    private let bucket: Bucket<Value>
    private let pageSize: Int
    private var page: [Entry<Value>] = []
    private var position = 0
    private var isLastPage = false

    init(bucket: Bucket<Value>, pageSize: Int) {
        self.bucket = bucket
        self.pageSize = pageSize
    }

    /// The next entry, or nil after the last.
    ///
    /// - Throws: ``CollectionError/store(_:)`` with an invalid argument if the page size is not
    ///   positive; the store's error, ``CollectionError/malformedEntry(bucket:key:reason:)`` or
    ///   ``CollectionError/decodingFailed(bucket:key:reason:)`` if a page cannot be read.
    public mutating func next() throws(CollectionError) -> Entry<Value>? {
        if position == page.count {
            guard !isLastPage else { return nil }
            guard pageSize > 0 else {
                throw .store(.invalidArgument("an entry iterator needs a page size above 0, not \(pageSize)"))
            }
            let after = page.last?.key
            page = try bucket.entries(after: after, limit: pageSize)
            position = 0
            isLastPage = page.count < pageSize
            if page.isEmpty { return nil }
        }
        defer { position += 1 }
        return page[position]
    }
}
