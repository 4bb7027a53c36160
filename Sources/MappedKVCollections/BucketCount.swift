import MappedKV

// The count record of a bucket (docs/FORMAT.md 11.4): the number of the bucket's entries, kept in
// the store beside them. The invariant, in a store of format version 2: for every bucket, the count
// record holds the number of the bucket's entry keys, and a bucket without a record has none. Every
// write that adds or removes entry keys writes the new count in the same store write (one batch,
// one append), inside the store's exclusive section, so a reader in any process, or an open after
// the writer was killed, finds the count and the entries in step.

/// Encodes, reads and writes the count records of buckets.
enum BucketCount {
    /// The first byte of every count record's key (U+0004).
    static let keyPrefix: UInt8 = 4

    /// The store key of `bucket`'s count record: U+0004, the bucket's UTF-8 length in decimal,
    /// `:`, the bucket (the entry-key layout of 11.1 with another first character and no key).
    static func key(bucket: String) -> String { "\u{4}\(bucket.utf8.count):\(bucket)" }

    /// A count's payload: 8 bytes, little-endian.
    static func payload(_ count: Int) -> [UInt8] {
        withUnsafeBytes(of: UInt64(max(count, 0)).littleEndian) { Array($0) }
    }

    /// The count a payload holds, or nil for bytes that are not a count record.
    static func count(_ payload: [UInt8]) -> Int? {
        guard payload.count == 8 else { return nil }
        var value: UInt64 = 0
        for byte in payload.reversed() { value = value << 8 | UInt64(byte) }
        return value <= UInt64(Int.max) ? Int(value) : nil
    }

    /// The number of `bucket`'s entries, from its count record, inside the exclusive section: 0
    /// without a record; counted from the entries if the record's bytes are not a count.
    static func stored(bucket: String, _ transaction: MappedKV.Transaction) throws(CollectionError) -> Int {
        let bytes: [UInt8]?
        do { bytes = try transaction.payload(forKey: key(bucket: bucket)) } catch { throw .store(error) }
        guard let bytes else { return 0 }
        if let count = count(bytes) { return count }
        return try entryKeys(of: bucket, transaction).count
    }

    /// The store keys of every entry of `bucket`, read inside the exclusive section.
    static func entryKeys(of bucket: String, _ transaction: MappedKV.Transaction) throws(CollectionError) -> [String] {
        let prefix = Array(CollectionKey.prefix(ofBucket: bucket).utf8)
        var keys: [String] = []
        do {
            try transaction.forEachRawEntryInPlace { key, _ in
                // The length prefix makes a match exact: a key with this prefix is the bucket's.
                guard key.starts(with: prefix) else { return }
                keys.append(String(decoding: key, as: UTF8.self))
            }
        } catch {
            throw .store(error)
        }
        return keys
    }

    /// Records the change of `bucket`'s count to `count` on `batch`: the record is set, or
    /// removed when the bucket is left empty.
    static func record(_ count: Int, bucket: String, on batch: MappedKV.WriteBatch) throws(MappedKVError) {
        if count > 0 {
            try batch.set(EntryPayload(bytes: payload(count)), forKey: key(bucket: bucket))
        } else {
            try batch.removeValue(forKey: key(bucket: bucket))
        }
    }

    /// Writes the count record of every bucket of a store of format version 1 (which has none)
    /// and marks it version 2, in one write, inside the exclusive section. Does nothing if the
    /// store is marked 2 already (another process upgraded it first).
    static func upgrade(_ store: MappedKV, _ transaction: MappedKV.Transaction) throws(CollectionError) {
        let marker = CollectionStore.kind.markerKey
        do {
            guard try transaction.string(forKey: marker) == CollectionStore.versionWithoutCounts else { return }
        } catch {
            throw .store(error)
        }
        var counts: [ExactString: Int] = [:]
        do {
            try transaction.forEachRawEntryInPlace { key, _ in
                guard key.first == CollectionKey.entryByte, let (bucket, _) = CollectionKey.decode(key) else { return }
                counts[ExactString(bucket), default: 0] += 1
            }
        } catch {
            throw .store(error)
        }
        try write(store) { batch throws(MappedKVError) in
            for (bucket, count) in counts { try record(count, bucket: bucket.string, on: batch) }
            try batch.set(CollectionStore.formatVersion, forKey: marker)
        }
    }

    /// Runs `body` on a write batch of `store` and commits it: one write, all of it or nothing.
    static func write(
        _ store: MappedKV, _ body: (MappedKV.WriteBatch) throws(MappedKVError) -> Void
    ) throws(CollectionError) {
        do {
            try store.batch { (batch) throws(MappedKVError) in try body(batch) }
        } catch let error as MappedKVError {
            throw .store(error)
        } catch {
            throw .store(.invalidArgument("\(error)"))
        }
    }
}
