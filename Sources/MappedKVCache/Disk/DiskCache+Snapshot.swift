import MappedKV
import MappedKVFormat

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
    /// Reads every entry inside `transaction`, least recently used first: one unsorted pass over
    /// the manifest's payloads, decoding records in place.
    static func snapshot(
        _ transaction: MappedKV.Transaction, pending: [String: UInt64]
    ) throws -> CacheSnapshot {
        var access: [String: UInt64] = [:]
        var batched: [String: UInt64] = [:]
        var entries: [CacheSnapshotEntry] = []
        try transaction.forEachRawEntryInPlace { keyBytes, payload in
            let storeKey = String(decoding: keyBytes, as: UTF8.self)
            if storeKey.hasPrefix("e:") {
                let raw = ManifestPayload.bytes(payload) ?? []
                let record = CacheEntryRecord(decoding: raw)
                entries.append(
                    CacheSnapshotEntry(
                        key: String(storeKey.dropFirst(2)), raw: raw, record: record,
                        lastAccess: record?.modified ?? 0))
            } else if storeKey.hasPrefix("a:") {
                access[String(storeKey.dropFirst(2))] = ManifestPayload.varint(payload) ?? 0
            } else if storeKey.hasPrefix(AccessTimeBatch.prefix) {
                AccessTimeBatch.decode(payload) { key, time in batched[key] = max(batched[key] ?? 0, time) }
            }
        }
        var live = Set<String>()
        live.reserveCapacity(entries.count)
        for index in entries.indices {
            let key = entries[index].key
            live.insert(key)
            let accessed = max(access[key] ?? 0, batched[key] ?? 0, pending[key] ?? 0)
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

/// Decoding of the manifest's stored payloads (docs/FORMAT.md 2.5) straight from the store's buffer.
enum ManifestPayload {
    /// The bytes of a bytes payload (`varint(n)` then n bytes), or nil if it is not one.
    static func bytes(_ payload: UnsafeRawBufferPointer) -> [UInt8]? {
        var cursor = ByteCursor(payload)
        guard let length = try? cursor.readVarint64(), length == UInt64(cursor.remaining) else { return nil }
        return Array(UnsafeRawBufferPointer(rebasing: payload[cursor.position...]))
    }

    /// The value of a varint payload, or nil if it is not one.
    static func varint(_ payload: UnsafeRawBufferPointer) -> UInt64? {
        var cursor = ByteCursor(payload)
        guard let value = try? cursor.readVarint64(), cursor.isAtEnd else { return nil }
        return value
    }
}
