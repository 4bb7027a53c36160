import MappedKV
import MappedKVFormat
import MappedKVIO

// Statistics, listing and verification: read-only views of the cache (verify can also repair).

/// Counts over a whole disk cache.
public struct DiskCacheStatistics: Sendable, Equatable {
    /// Entries (expired ones not yet trimmed included).
    public var count = 0
    /// Their value bytes.
    public var bytes = 0
    /// Entries whose value is inside the manifest.
    public var inlineCount = 0
    /// Entries whose value is in its own file.
    public var fileCount = 0
    /// Files and folders no entry accounts for: unrecorded value files, temporary files of
    /// processes that no longer run, unfinished removeAll deletions. ``DiskCache/trim()`` deletes them.
    public var orphanCount = 0
}

/// One line of ``DiskCache/entries()`` and ``DiskCache/forEachEntry(includingValues:_:)``.
public struct DiskCacheEntryInfo: Sendable, Equatable {
    /// The key.
    public var key: String
    /// The value's size in bytes.
    public var size: Int
    /// Whether the value is inside the manifest (else in its own file).
    public var isInline: Bool
    /// The later of the last access and the modification, in milliseconds since 1970.
    public var lastAccess: UInt64
    /// When the entry expires, or nil.
    public var expiry: UInt64?
    /// The value's bytes, checked against the record, when the listing was asked for them
    /// (``DiskCache/forEachEntry(includingValues:_:)``); nil otherwise.
    public var value: [UInt8]?
}

extension DiskCache {
    /// Counts entries, bytes and orphans.
    public func statistics() throws(CacheError) -> DiskCacheStatistics {
        let files = self.files
        return try exclusively { transaction -> DiskCacheStatistics in
            var statistics = DiskCacheStatistics()
            var referenced = Set<String>()
            try Self.forEachEntrySummary(in: transaction) { size, fileName in
                statistics.count += 1
                statistics.bytes += size
                if let name = fileName {
                    statistics.fileCount += 1
                    referenced.insert(name)
                } else {
                    statistics.inlineCount += 1
                }
            }
            statistics.orphanCount =
                files.listFiles().filter { !referenced.contains($0) }.count
                + files.staleTemporaryFiles().count + files.trashFolders().count
            return statistics
        }
    }

    /// Every entry that has not expired, least recently used first.
    public func entries() throws(CacheError) -> [DiskCacheEntryInfo] {
        let now = clock.now()
        return try snapshot().entries.compactMap { entry in
            guard let record = entry.record, !record.isExpired(at: now) else { return nil }
            return DiskCacheEntryInfo(entry, record: record)
        }
    }

    /// Checks every record against its bytes (inline or file: length and CRC) and the folders for
    /// orphans; returns one line per problem, none when the cache is consistent. The check runs
    /// under the manifest's exclusive lock, so writers in other processes wait for it and cannot
    /// make it report a file they are recording as an orphan. With `repair`, drops every entry
    /// that cannot be served and deletes the orphans, so that a second verify finds nothing.
    public func verify(repair: Bool = false) throws(CacheError) -> [String] {
        let pending = accessTimes.withLock { $0.pending }
        let files = self.files
        let (problems, unservable) = try exclusively { transaction -> ([String], [(String, [UInt8])]) in
            var problems: [String] = []
            var unservable: [(String, [UInt8])] = []
            let snapshot = try Self.snapshot(transaction, pending: pending)
            var referenced = Set<String>()
            for entry in snapshot.entries {
                guard let record = entry.record else {
                    problems.append("\(entry.key): the manifest record does not decode")
                    unservable.append((entry.key, entry.raw))
                    continue
                }
                if let name = record.fileName { referenced.insert(name) }
                if try read(record) == nil {
                    let place = record.fileName.map { "file \($0)" } ?? "inline value"
                    problems.append("\(entry.key): the \(place) is missing, short or fails its CRC")
                    unservable.append((entry.key, entry.raw))
                }
            }
            for name in files.listFiles() where !referenced.contains(name) {
                problems.append("files/\(name): no entry records this file")
            }
            for path in files.staleTemporaryFiles() {
                problems.append("\(path): temporary file of a process that ended")
            }
            for folder in files.trashFolders() { problems.append("\(folder): unfinished removeAll deletion") }
            for key in snapshot.danglingAccessKeys { problems.append("a:\(key): access time without an entry") }
            return (problems, unservable)
        }
        if repair && !problems.isEmpty {
            for (key, raw) in unservable { try drop(key, ifStill: raw) }
            try trim(to: DiskCacheLimits())
        }
        return problems
    }
}
