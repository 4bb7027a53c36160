import MappedKV

// Ordering a bucket's keys in this process, on the first page of keys asked for. The invariant it
// keeps is the index set's: a bucket with a set has an ID for every entry with a well-formed
// record. It runs inside the store's exclusive section, so no write of any process lands between
// the scan and the order's first use; from then on puts, removals and other processes' changes
// keep the order, as they keep the indexes.

extension CollectionIndexes {
    /// Orders the keys of `bucket`, inside the exclusive section (`transaction` is its own). A
    /// bucket with indexes has every key in its table already, and is ordered from it; a bucket
    /// without is read from the store once, keys only.
    func orderKeys(of bucket: String, _ transaction: MappedKV.Transaction) throws(CollectionError) {
        let ordered = state.withLock { state -> Bool in
            guard let set = state.buckets[ExactString(bucket)] else { return false }
            set.orderKeys()
            return true
        }
        if ordered { return }
        let prefix = Array(CollectionKey.prefix(ofBucket: bucket).utf8)
        var keys: [String] = []
        do {
            try transaction.forEachRawEntryInPlace { key, payload in
                // The length prefix makes a match exact; a record that does not parse is left
                // out, as the index build leaves it out.
                guard key.starts(with: prefix), (try? EntryRecordView(payload)) != nil else { return }
                keys.append(
                    String(decoding: UnsafeRawBufferPointer(rebasing: key[prefix.count...]), as: UTF8.self))
            }
        } catch {
            throw .store(error)
        }
        let set = BucketIndexSet(bucket: bucket)
        set.table.load(keys)
        set.orderKeys()
        state.withLock { state in
            state.buckets[ExactString(bucket)] = set
            state.changes &+= 1
        }
    }
}
