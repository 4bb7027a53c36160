import Foundation
import MappedKV
import MappedKVFormat
import Synchronization

/// A named group of entries in a ``CollectionStore``: keys in different buckets never collide.
///
/// A put writes the value, its metadata and its times as one record, under the store's exclusive
/// lock, so a reader in any process sees the whole entry or the previous one. Reads decode through
/// a bounded cache that is checked against the stored bytes, so a write by any process is seen at
/// once.
public final class Bucket<Value: Sendable>: Sendable {
    /// The bucket's name.
    public let name: String
    let store: MappedKV
    let indexes: CollectionIndexes
    let serializer: any EntrySerializer<Value>
    private let cache: Mutex<DecodedCache<Value>>
    /// Whether decoded entries are cached: not for raw bytes, whose decoding is one copy, no
    /// dearer than checking the cache.
    let cachesEntries: Bool
    /// Whether values are the stored bytes themselves (``RawEntrySerializer``): a page then makes
    /// its entries straight from the records where they lie, since decoding is only a copy.
    let storesRawBytes: Bool
    /// The bytes every store key of the bucket starts with (``CollectionKey/prefix(ofBucket:)``).
    let keyPrefix: String
    /// The bucket's index set as last looked up. Read and written only under the mutex of
    /// `indexes.state`; release builds skip the exclusivity checks on it (three a put:
    /// `tools/bench.sh --collections`), debug builds keep them so that the tests would catch an
    /// overlapping access.
    #if !DEBUG
    @exclusivity(unchecked)
    #endif
    nonisolated(unsafe) var indexSetMemo = IndexSetMemo()

    init(
        name: String, store: MappedKV, indexes: CollectionIndexes, serializer: any EntrySerializer<Value>,
        cacheLimit: Int
    ) {
        self.name = name
        self.store = store
        self.indexes = indexes
        self.serializer = serializer
        self.cache = Mutex(DecodedCache(limit: cacheLimit))
        self.cachesEntries = cacheLimit > 0 && !(serializer is RawEntrySerializer)
        self.storesRawBytes = serializer is RawEntrySerializer && Value.self == [UInt8].self
        self.keyPrefix = CollectionKey.prefix(ofBucket: name)
    }

    // MARK: Writing

    /// Stores `value` under `key` with `metadata`, replacing any previous value and metadata. The
    /// creation time of an existing key is kept; the modification time is now.
    public func put(_ value: Value, forKey key: String, metadata: [String: MetadataValue] = [:]) throws(CollectionError)
    {
        let bytes: [UInt8]
        do {
            bytes = try serializer.encode(value, bucket: name, key: key)
        } catch {
            throw .encodingFailed(bucket: name, key: key, reason: "\(error)")
        }
        let storeKey = CollectionKey.join(keyPrefix, key)
        let now = EntryRecord.milliseconds(Date())
        let name = self.name
        try indexes.inSection { (transaction) throws(CollectionError) in
            var created = now
            var existed = false
            // Every stored entry of an indexed bucket has an ID in the bucket's key table (and the
            // section has caught up with other processes): a key without one has no record whose
            // created time to keep, and the store's lookup (a cache miss in a large store) is skipped.
            let isNew = indexes.state.withLock { state in
                state.indexSet(of: name, memo: &indexSetMemo).map { $0.table.id(of: key) == nil } ?? false
            }
            if !isNew {
                do throws(MappedKVError) {
                    try transaction.withPayload(forKey: storeKey) { old in
                        guard let old else { return }
                        existed = true
                        if let stored = try? EntryRecordView(old).createdMilliseconds { created = stored }
                    }
                } catch {
                    throw .store(error)
                }
            }
            let record = EntryRecord(
                createdMilliseconds: created, modifiedMilliseconds: now, metadata: metadata, valueBytes: bytes)
            // The index values, computed once: checked against the unique indexes, then applied.
            // The bucket's index set is looked up once: sets are added and replaced only inside
            // the exclusive section, which this put holds until it has applied the values. The
            // values go into the handle's reused array, handed back at the end.
            let (set, values, conflict) = indexes.state.withLock { state in
                guard let set = state.indexSet(of: name, memo: &indexSetMemo) else {
                    return (BucketIndexSet?.none, [IndexValue?](), (index: String, other: String)?.none)
                }
                var values: [IndexValue?] = []
                swap(&values, &indexSetMemo.values)
                set.values(of: record, key: key, into: &values)
                return (set, values, set.uniqueConflict(values, key: key))
            }
            if let conflict {
                throw .uniqueConflict(bucket: name, index: conflict.index, key: key, existingKey: conflict.other)
            }
            if existed {
                do throws(MappedKVError) {
                    try transaction.set(record, forKey: storeKey)
                } catch {
                    throw .store(error)
                }
            } else {
                // A new key: the entry and the bucket's count, one more, in one write.
                let count = try BucketCount.stored(bucket: name, transaction)
                try BucketCount.write(store) { (batch) throws(MappedKVError) in
                    try batch.set(record, forKey: storeKey)
                    try BucketCount.record(count + 1, bucket: name, on: batch)
                }
            }
            indexes.state.withLock { state in
                if let set {
                    set.apply(values, key: key)
                    indexSetMemo.values = values
                }
                state.changes &+= 1
            }
            publishChanges { [.put(key: key)] }
        }
    }

    /// Removes `key`; returns whether it was present.
    @discardableResult
    public func remove(_ key: String) throws(CollectionError) -> Bool {
        let storeKey = CollectionKey.join(keyPrefix, key)
        let name = self.name
        let removed = try indexes.inSection { (transaction) throws(CollectionError) -> Bool in
            do throws(MappedKVError) {
                guard try transaction.contains(storeKey) else { return false }
            } catch {
                throw .store(error)
            }
            // The entry and the bucket's count, one less, in one write.
            let count = try BucketCount.stored(bucket: name, transaction)
            try BucketCount.write(store) { (batch) throws(MappedKVError) in
                try batch.removeValue(forKey: storeKey)
                try BucketCount.record(count - 1, bucket: name, on: batch)
            }
            indexes.state.withLock { state in
                state.buckets[ExactString(name)]?.apply(nil, key: key)
                state.changes &+= 1
            }
            publishChanges { [.remove(key: key)] }
            return true
        }
        cache.withLock { $0.remove(key) }
        return removed
    }

    // MARK: Reading

    /// The value of `key`, or nil if the bucket has no such key.
    public func value(forKey key: String) throws(CollectionError) -> Value? { try entry(forKey: key)?.value }

    /// The entry of `key` (value, metadata, times), or nil if the bucket has no such key.
    @_specialize(exported:false,where Value == [UInt8])
    public func entry(forKey key: String) throws(CollectionError) -> Entry<Value>? {
        let storeKey = CollectionKey.join(keyPrefix, key)
        guard let stored = try collectionCall({ try store.payload(forKey: storeKey) }) else {
            forget(key)
            return nil
        }
        return try entry(stored: stored, key: key)
    }

    /// The entry of `key` decoded from its stored bytes `stored`, through the cache.
    func entry(stored: [UInt8], key: String) throws(CollectionError) -> Entry<Value> {
        guard cachesEntries else { return try decode(stored, key: key) }
        if let cached = cache.withLock({ $0.entry(forKey: key, stored: stored) }) { return cached }
        let entry = try decode(stored, key: key)
        cache.withLock { $0.insert(entry, stored: stored, forKey: key) }
        return entry
    }

    /// Drops the cached entry of `key`, which the store no longer has.
    func forget(_ key: String) {
        if cachesEntries { cache.withLock { $0.remove(key) } }
    }

    /// Drops every cached entry: the store has none of the bucket's entries any more.
    func forgetAll() {
        if cachesEntries { cache.withLock { $0.removeAll() } }
    }

    /// Whether the bucket has `key`.
    public func contains(_ key: String) throws(CollectionError) -> Bool {
        let storeKey = CollectionKey.join(keyPrefix, key)
        return try collectionCall { try store.contains(storeKey) }
    }

    /// The bucket's keys, sorted by UTF-8 bytes.
    public func keys() throws(CollectionError) -> [String] {
        let all = try collectionCall { try store.allKeys }
        return all.compactMap { storeKey in
            guard storeKey.hasPrefix(keyPrefix), let pair = CollectionKey.decode(storeKey), pair.bucket == name
            else { return nil }
            return pair.key
        }
        .sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
    }

    /// The number of entries in the bucket, read from the bucket's count record (docs/FORMAT.md
    /// 11.4): one lookup, whatever the bucket's size, and right after any process's write. A store
    /// of format version 1 opened read-only has no count records: its buckets are counted key by key.
    public var count: Int {
        get throws(CollectionError) {
            let countKey = BucketCount.key(bucket: name)
            var bytes = try collectionCall { try store.payload(forKey: countKey) }
            if bytes == nil {
                // No record: an empty bucket of a store of version 2, or a store of version 1. The
                // record is read again once the marker says 2: another process may have upgraded
                // the store (records and marker in one write) between the two reads.
                let version = try collectionCall { try store.string(forKey: CollectionStore.kind.markerKey) }
                guard version != CollectionStore.versionWithoutCounts else { return try keys().count }
                bytes = try collectionCall { try store.payload(forKey: countKey) }
                guard bytes != nil else { return 0 }
            }
            // Bytes that are not a count are not trusted: the keys are counted.
            if let bytes, let count = BucketCount.count(bytes) { return count }
            return try keys().count
        }
    }

    /// Every entry of the bucket, sorted by key.
    public func entries() throws(CollectionError) -> [Entry<Value>] {
        var result: [Entry<Value>] = []
        for key in try keys() {
            if let entry = try entry(forKey: key) { result.append(entry) }
        }
        return result
    }

    /// Decoded entries held by the cache now (for tests and tuning).
    public var cachedEntryCount: Int { cache.withLock { $0.count } }

    // MARK: Decoding

    private func decode(_ stored: [UInt8], key: String) throws(CollectionError) -> Entry<Value> {
        let record: EntryRecord
        do {
            record = try stored.withUnsafeBytes { (buffer) throws(EntryRecordError) in try EntryRecord(decoding: buffer)
            }
        } catch {
            throw .malformedEntry(bucket: name, key: key, reason: "\(error)")
        }
        return try entry(of: record, key: key)
    }

    /// The entry of `key` whose stored record is `record`.
    func entry(of record: EntryRecord, key: String) throws(CollectionError) -> Entry<Value> {
        let value: Value
        do {
            value = try serializer.decode(record.valueBytes, bucket: name, key: key)
        } catch {
            throw .decodingFailed(bucket: name, key: key, reason: "\(error)")
        }
        return Entry(
            bucket: name, key: key, value: value, metadata: record.metadata,
            created: EntryRecord.date(record.createdMilliseconds),
            modified: EntryRecord.date(record.modifiedMilliseconds))
    }

    /// Runs a store call, wrapping its errors.
    private func collectionCall<R>(_ body: () throws -> R) throws(CollectionError) -> R {
        do {
            return try body()
        } catch let error as MappedKVError {
            throw .store(error)
        } catch let error as CollectionError {
            throw error
        } catch {
            throw .store(.invalidArgument("\(error)"))
        }
    }
}

/// An entry record's bytes as a store payload.
struct EntryPayload: PayloadCodable, Sendable {
    var bytes: [UInt8]
    init(bytes: [UInt8]) { self.bytes = bytes }
    init(payload: UnsafeRawBufferPointer) { bytes = Array(payload) }
    func encodePayload(into output: inout [UInt8]) { output.append(contentsOf: bytes) }
}

extension Bucket {
    /// Stores every entry as given, its times included, in one write: a reader in any process,
    /// or a process killed halfway, sees all of them or none. Unique indexes are checked first,
    /// against the bucket and within the batch; on a conflict nothing is written.
    public func importEntries(_ entries: [Entry<Value>]) throws(CollectionError) {
        var records: [(key: String, record: EntryRecord)] = []
        records.reserveCapacity(entries.count)
        for entry in entries {
            let bytes: [UInt8]
            do {
                bytes = try serializer.encode(entry.value, bucket: name, key: entry.key)
            } catch {
                throw .encodingFailed(bucket: name, key: entry.key, reason: "\(error)")
            }
            records.append(
                (
                    entry.key,
                    EntryRecord(
                        createdMilliseconds: EntryRecord.milliseconds(entry.created),
                        modifiedMilliseconds: EntryRecord.milliseconds(entry.modified), metadata: entry.metadata,
                        valueBytes: bytes)
                ))
        }
        let name = self.name
        try indexes.inSection { (transaction) throws(CollectionError) in
            let conflict = indexes.state.withLock { state in state.buckets[ExactString(name)]?.batchConflict(records) }
            if let conflict {
                throw .uniqueConflict(
                    bucket: name, index: conflict.index, key: conflict.key, existingKey: conflict.other)
            }
            var batch = records.map {
                StoreEntry(key: CollectionKey.encode(bucket: name, key: $0.key), payload: $0.record.encoded())
            }
            // The bucket's count grows by the keys it did not have (each counted once), written
            // in the same batch as the entries.
            var added = 0
            var seen: Set<ExactString> = []
            do throws(MappedKVError) {
                for entry in batch where seen.insert(ExactString(entry.key)).inserted {
                    if try !transaction.contains(entry.key) { added += 1 }
                }
            } catch {
                throw .store(error)
            }
            if added > 0 {
                let count = try BucketCount.stored(bucket: name, transaction) + added
                batch.append(StoreEntry(key: BucketCount.key(bucket: name), payload: BucketCount.payload(count)))
            }
            do throws(MappedKVError) { try store.importEntries(batch) } catch { throw .store(error) }
            indexes.state.withLock { state in
                if let set = state.buckets[ExactString(name)] {
                    for (key, record) in records { set.apply(record, key: key) }
                }
                state.changes &+= 1
            }
            publishChanges { records.map { .put(key: $0.key) } }
        }
    }
}
