import MappedKVFormat

// Reads of many keys in one call. A lookup waits for two cache misses in turn (the key's bucket,
// then the record it names); a batch reads the buckets and records of a group of keys first, with
// nothing depending on them (KeyIndex+Prefetch.swift), so the misses of the group are in flight
// together and the lookups that follow find them cached. The invariant: every value a call returns
// is from one state of the store, as a single get's is, and is exactly what ``value(forKey:as:)``
// would return for its key.

extension StoreCore {
    /// How many keys are read ahead together: enough to keep the processor's misses in flight, few
    /// enough that the first lines read are still cached when the group's lookups reach them.
    static let readAheadGroup = 64

    /// Decodes the value of each key of `keys` as `V`, in order; nil for a key that is absent or
    /// expired.
    ///
    /// - Throws: ``MappedKVError/valueDecodingFailed(key:type:reason:)`` for the first key whose
    ///   payload does not decode as `V`.
    func values<V: PayloadCodable>(forKeys keys: [String], as type: V.Type) throws(MappedKVError) -> [V?] {
        try prepareRead()
        var values: [V?] = []
        values.reserveCapacity(keys.count)
        var failure: (key: String, reason: String)?
        mirror.withUnsafeBytes { mirror in
            withUnsafeTemporaryAllocation(of: UInt32.self, capacity: Self.readAheadGroup) { hashes in
                var start = 0
                while start < keys.count, failure == nil {
                    let group = start..<min(start + Self.readAheadGroup, keys.count)
                    for position in group {
                        hashes[position - start] = Self.withBytes(of: keys[position]) { index.hash($0) }
                    }
                    let groupHashes = UnsafeBufferPointer(rebasing: hashes[0..<group.count])
                    if group.count > 1 { index.touchRecords(ofHashes: groupHashes, in: mirror) }
                    for position in group {
                        let range = Self.withBytes(of: keys[position]) { key in
                            liveValueRange(forKey: key, hash: hashes[position - start], in: mirror)
                        }
                        guard let range else {
                            values.append(nil)
                            continue
                        }
                        do throws(FormatError) {
                            values.append(try V(payload: UnsafeRawBufferPointer(rebasing: mirror[range])))
                        } catch {
                            failure = (keys[position], error.description)
                            break
                        }
                    }
                    start = group.upperBound
                }
            }
        }
        if let failure {
            throw .valueDecodingFailed(key: failure.key, type: "\(V.self)", reason: failure.reason)
        }
        return values
    }
}
