import MappedKV

// A consistent view of every entry, read inside the manifest's exclusive lock: what trim,
// statistics, listing and verify work from.

/// One entry as the manifest holds it.
struct CacheSnapshotEntry: Sendable {
    var key: String
    /// The record's bytes as stored (for a compare-and-remove).
    var raw: [UInt8]
    /// The decoded record, or nil if the bytes are not a record.
    var record: CacheEntryRecord?
    /// The later of the modification time and the last recorded access, in milliseconds since 1970.
    var lastAccess: UInt64
}

/// Every entry of the manifest, plus access-time keys whose entry is gone.
struct CacheSnapshot: Sendable {
    var entries: [CacheSnapshotEntry]
    var danglingAccessKeys: [String]
}

extension DiskCache {
    /// Reads every entry inside `transaction`, least recently used first.
    static func snapshot(
        _ transaction: MappedKV.Transaction, pending: [String: UInt64]
    ) throws(MappedKVError) -> CacheSnapshot {
        var access: [String: UInt64] = [:]
        var entries: [CacheSnapshotEntry] = []
        for storeKey in try transaction.allKeys {
            if storeKey.hasPrefix("a:") {
                let time = (try? transaction.value(forKey: storeKey, as: UInt64.self)) ?? nil
                access[String(storeKey.dropFirst(2))] = time ?? 0
            } else if storeKey.hasPrefix("e:") {
                guard let raw = try? transaction.value(forKey: storeKey, as: [UInt8].self) else { continue }
                let record = CacheEntryRecord(decoding: raw)
                entries.append(
                    CacheSnapshotEntry(
                        key: String(storeKey.dropFirst(2)), raw: raw, record: record,
                        lastAccess: record?.modified ?? 0))
            }
        }
        var live = Set<String>()
        for index in entries.indices {
            let key = entries[index].key
            live.insert(key)
            let accessed = max(access[key] ?? 0, pending[key] ?? 0)
            entries[index].lastAccess = max(entries[index].lastAccess, accessed)
        }
        entries.sort { ($0.lastAccess, $0.key) < ($1.lastAccess, $1.key) }
        let dangling = access.keys.filter { !live.contains($0) }.sorted()
        return CacheSnapshot(entries: entries, danglingAccessKeys: dangling)
    }

    /// A snapshot under the manifest's exclusive lock, with this process's pending access times.
    func snapshot() throws(CacheError) -> CacheSnapshot {
        let pending = accessTimes.withLock { $0.pending }
        return try exclusively { transaction in try Self.snapshot(transaction, pending: pending) }
    }
}
