// Reads of many keys in one call. A lookup waits for two cache misses in turn (the key's bucket,
// then the record it names); a batch reads the buckets and records of a group of keys first, with
// nothing depending on them (KeyIndex+Prefetch.swift), so the misses of the group are in flight
// together and the lookups that follow find them cached. The invariant: every payload a call hands
// over is from one state of the store, as a single get's is, and is exactly the one a single get
// of its key would decode.

extension StoreCore {
    /// How many keys are read ahead together: enough to keep the processor's misses in flight, few
    /// enough that the first lines read are still cached when the group's lookups reach them.
    static let readAheadGroup = 64

    /// Calls `body` with the position of each key of `keys` and its live payload where it lies in
    /// the mirror (nil for a key that is absent or expired), in order. The buffer is valid only
    /// during its call, and `body` must not call the store.
    func withPayloads(
        forKeys keys: [String], _ body: (_ position: Int, _ payload: UnsafeRawBufferPointer?) -> Void
    ) throws(MappedKVError) {
        if mappedReads.isActive,
            let copied = try payloadsMapped(
                count: keys.count, withKey: { position, lookup in Self.withBytes(of: keys[position]) { lookup($0) } })
        {
            return copied.handOver(body)
        }
        try prepareRead()
        loaded.mirror.withUnsafeBytes { mirror in
            withUnsafeTemporaryAllocation(of: UInt32.self, capacity: Self.readAheadGroup) { hashes in
                var start = 0
                while start < keys.count {
                    let group = start..<min(start + Self.readAheadGroup, keys.count)
                    for position in group {
                        hashes[position - start] = Self.withBytes(of: keys[position]) { loaded.index.hash($0) }
                    }
                    let groupHashes = UnsafeBufferPointer(rebasing: hashes[0..<group.count])
                    if group.count > 1 { loaded.index.touchRecords(ofHashes: groupHashes, in: mirror) }
                    for position in group {
                        let range = Self.withBytes(of: keys[position]) { key in
                            liveValueRange(forKey: key, hash: hashes[position - start], in: mirror)
                        }
                        body(position, range.map { UnsafeRawBufferPointer(rebasing: mirror[$0]) })
                    }
                    start = group.upperBound
                }
            }
        }
    }
}
