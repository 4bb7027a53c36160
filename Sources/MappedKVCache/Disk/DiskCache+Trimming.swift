import Glibc
import MappedKV
import MappedKVIO

// Trimming: limits are applied oldest access first, inside the manifest's exclusive lock, so the
// entries and files it sees are exactly the recorded ones; orphan files (a crash between the
// rename and the record), temporary files of dead processes and unfinished removeAll deletions
// are collected on the way. At most one process trims at a time: a background trim takes
// `trim.lock` with a try-lock and skips its turn when another process holds it.

/// What a trim removed.
public struct DiskCacheTrimReport: Sendable, Equatable {
    /// Entries removed by a limit or because they expired.
    public var removedEntries = 0
    /// Their value bytes.
    public var removedBytes = 0
    /// Records that could not be served (damaged), removed.
    public var damagedEntries = 0
    /// Orphan value files, stale temporary files and leftover trash folders deleted.
    public var orphansRemoved = 0
    /// Whether the trim ran (false when another process was trimming and this was a try).
    public var ran = true
}

extension DiskCache {
    /// Trims to the configured limits now, waiting for another process's trim to finish first.
    @discardableResult
    public func trim() throws(CacheError) -> DiskCacheTrimReport {
        try trim(to: configuration.limits)
    }

    /// Trims to `limits` now (the configured limits do not apply to this call).
    @discardableResult
    public func trim(to limits: DiskCacheLimits) throws(CacheError) -> DiskCacheTrimReport {
        try withTrimLock(waiting: true) { () throws(CacheError) in try applyLimits(limits) }
            ?? DiskCacheTrimReport(ran: false)
    }

    /// Removes least recently used entries until at most `count` remain.
    @discardableResult
    public func trim(toCount count: Int) throws(CacheError) -> DiskCacheTrimReport {
        try trim(to: DiskCacheLimits(count: count))
    }

    /// Removes least recently used entries until their values take at most `bytes`.
    @discardableResult
    public func trim(toBytes bytes: Int) throws(CacheError) -> DiskCacheTrimReport {
        try trim(to: DiskCacheLimits(bytes: bytes))
    }

    /// Removes entries not accessed within `age`.
    @discardableResult
    public func trim(toAge age: Duration) throws(CacheError) -> DiskCacheTrimReport {
        try trim(to: DiskCacheLimits(age: age))
    }

    /// Removes least recently used entries until the file system has `bytes` free.
    @discardableResult
    public func trim(toFreeSpace bytes: Int) throws(CacheError) -> DiskCacheTrimReport {
        try trim(to: DiskCacheLimits(freeSpace: bytes))
    }

    /// Runs `body` holding `trim.lock`; with `waiting` false, returns nil at once if another
    /// process (or another trim in this one) holds it.
    func withTrimLock<R>(
        waiting: Bool, _ body: () throws(CacheError) -> R
    ) throws(CacheError) -> R? {
        let path = directory + "/trim.lock"
        let file = try fileCall { () throws(SystemError) in try FileDescriptor.open(path, access: .readWriteCreate) }
        defer { file.close() }  // which releases the lock
        let lock = FileLock(file)
        if waiting {
            try fileCall { () throws(SystemError) in _ = try lock.lock(.exclusive) }
        } else {
            let acquired = try fileCall { () throws(SystemError) in try lock.tryLockExclusive() }
            guard acquired != nil else { return nil }
        }
        return try body()
    }

    /// The trim itself, under `trim.lock`.
    func applyLimits(_ limits: DiskCacheLimits) throws(CacheError) -> DiskCacheTrimReport {
        try flushAccessTimes()
        let now = clock.now()
        let files = self.files
        var evicted: [DiskEvictionReason: Int] = [:]  // for the metrics
        let (report, doomed, removed) = try exclusively {
            transaction -> (DiskCacheTrimReport, [String], (evicted: [String], expired: [String])) in
            var report = DiskCacheTrimReport()
            var doomed: [String] = []
            let snapshot = try Self.snapshot(transaction, pending: [:])
            // Every removal of the trim goes into one batch, committed below as one append: the
            // decisions rest on the snapshot, which the removals do not change.
            var removals = snapshot.danglingAccessKeys.map(Self.accessKey)
            var removed: (evicted: [String], expired: [String]) = ([], [])
            var kept: [CacheSnapshotEntry] = []
            var bytes = 0
            func remove(_ entry: CacheSnapshotEntry) {
                removals.append(Self.entryKey(entry.key))
                removals.append(Self.accessKey(entry.key))
                if let name = entry.record?.fileName { doomed.append(name) }
            }
            let oldest = limits.age.map { now &- min(now, $0.cacheMilliseconds) }
            for entry in snapshot.entries {
                guard let record = entry.record else {
                    remove(entry)
                    evicted[.damaged, default: 0] += 1
                    report.damagedEntries += 1
                    continue
                }
                if record.isExpired(at: now) {
                    remove(entry)
                    removed.expired.append(entry.key)
                    evicted[.expired, default: 0] += 1
                    report.removedEntries += 1
                    report.removedBytes += record.size
                } else if oldest.map({ entry.lastAccess < $0 }) == true {
                    remove(entry)
                    removed.evicted.append(entry.key)
                    evicted[.age, default: 0] += 1
                    report.removedEntries += 1
                    report.removedBytes += record.size
                } else {
                    kept.append(entry)
                    bytes += record.size
                }
            }
            var free = limits.freeSpace == nil ? nil : files.freeSpace()
            var first = 0
            while first < kept.count {
                let overCount = limits.count.map { kept.count - first > $0 } ?? false
                let overBytes = limits.bytes.map { bytes > $0 } ?? false
                let overSpace = limits.freeSpace.map { limit in (free ?? Int.max) < limit } ?? false
                guard overCount || overBytes || overSpace else { break }
                let entry = kept[first]
                let size = entry.record?.size ?? 0
                remove(entry)
                removed.evicted.append(entry.key)
                evicted[overCount ? .count : overBytes ? .bytes : .freeSpace, default: 0] += 1
                report.removedEntries += 1
                report.removedBytes += size
                bytes -= size
                if let current = free { free = current + size }
                first += 1
            }
            try manifest.removeValues(forKeys: removals)
            try totals.write(CacheCounts(count: kept.count - first, bytes: bytes))
            metrics?.record(CacheCounts(count: kept.count - first, bytes: bytes))
            // Orphans: files no record names. Renames into files/ happen under this same lock.
            let referenced = Set(kept[first...].compactMap { $0.record?.fileName })
            let alreadyDoomed = Set(doomed)
            for name in files.listFiles() where !referenced.contains(name) && !alreadyDoomed.contains(name) {
                doomed.append(name)
                report.orphansRemoved += 1
            }
            return (report, doomed, removed)
        }
        for name in doomed { files.remove(name) }
        metrics?.countTrim(evicted)
        if !removed.evicted.isEmpty || !removed.expired.isEmpty {
            CacheChangeHub.post(.trimmed(evicted: removed.evicted, expired: removed.expired), in: hubChannel)
        }
        var final = report
        for path in files.staleTemporaryFiles() {
            do { try FileDescriptor.remove(path) } catch { CacheFiles.deleteTree(path) }
            final.orphansRemoved += 1
        }
        for folder in files.trashFolders() {
            CacheFiles.deleteTree(folder)
            final.orphansRemoved += 1
        }
        logger.debug(
            "trimmed the cache",
            metadata: ["removed": "\(final.removedEntries)", "orphans": "\(final.orphansRemoved)"])
        return final
    }

    /// Starts the background trim: every `interval`, in at most one process at a time.
    func startBackgroundTrim(every interval: Duration) {
        let task = Task.detached(priority: .background) { [weak self] in
            while !Task.isCancelled {
                try? await Task.sleep(for: interval)
                guard !Task.isCancelled, let cache = self else { return }
                // A turn runs holding `backgroundTurn`, and not at all once the cache is closed:
                // close() takes the same lock, so no turn is running or starts after it returns.
                let ran = cache.backgroundTurn.withLock { isClosed -> Bool in
                    guard !isClosed else { return false }
                    do {
                        _ = try cache.withTrimLock(waiting: false) { () throws(CacheError) in
                            try cache.applyLimits(cache.configuration.limits)
                        }
                    } catch {
                        cache.logger.debug("background trim failed", metadata: ["error": "\(error)"])
                    }
                    return true
                }
                guard ran else { return }
            }
        }
        backgroundTrim.withLock { $0 = task }
    }
}
