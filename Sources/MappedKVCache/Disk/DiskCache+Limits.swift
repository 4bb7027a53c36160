import MappedKV
import MappedKVFormat

// Limits that hold by themselves.
//
// Every write of the manifest updates the directory's totals (`CacheTotals`) in the same exclusive
// section. A set that leaves them over the count or byte limit schedules a trim on a background
// task and returns: the set never waits for a trim, here or in another process. The task trims
// under `trim.lock` taken with a try-lock, so at most one process trims at a time; when another
// process holds it, the task waits a little and looks again, until the totals are within the
// limits. The age and free-space limits depend on time and on the file system, not on a write:
// the periodic trim applies them (``DiskCacheConfiguration/trimInterval``, 60 s by default).

extension DiskCache {
    /// Whether `counts` break the count or byte limit.
    func exceedsLimits(_ counts: CacheCounts) -> Bool {
        let limits = configuration.limits
        return (limits.count.map { counts.count > $0 } ?? false) || (limits.bytes.map { counts.bytes > $0 } ?? false)
    }

    /// The totals before a write, counted from the manifest if the file has none. Call it in an
    /// exclusive section of the manifest before the write, and ``account(_:after:)`` after it.
    func countsBeforeWrite(in transaction: MappedKV.Transaction) throws(CacheError) -> CacheCounts {
        try totals.read { () throws(CacheError) in try Self.count(transaction) }
    }

    /// Records `counts` plus `delta` as the totals; true if they break the count or byte limit.
    func account(_ delta: CacheCounts, after counts: CacheCounts) throws(CacheError) -> Bool {
        let updated = CacheCounts(count: counts.count + delta.count, bytes: counts.bytes + delta.bytes)
        try totals.write(updated)
        metrics?.record(updated)
        return exceedsLimits(updated)
    }

    /// The manifest's entries and their value bytes, counted record by record.
    static func count(_ transaction: MappedKV.Transaction) throws(CacheError) -> CacheCounts {
        var counts = CacheCounts(count: 0, bytes: 0)
        try manifestCall { () throws(MappedKVError) in
            try forEachEntrySummary(in: transaction) { size, _ in
                counts.count += 1
                counts.bytes += size
            }
        }
        return counts
    }

    /// Calls `body` with the value size and file name (nil for an inline value) of every entry
    /// record that decodes, in file order, where the records lie.
    static func forEachEntrySummary(
        in transaction: MappedKV.Transaction, _ body: (_ size: Int, _ fileName: String?) -> Void
    ) throws(MappedKVError) {
        try transaction.forEachRawEntryInPlace { storeKey, payload in
            guard storeKey.count >= 2, storeKey[0] == UInt8(ascii: "e"), storeKey[1] == UInt8(ascii: ":") else {
                return
            }
            var cursor = ByteCursor(payload)
            guard let length = try? cursor.readVarint64(), length == UInt64(cursor.remaining),
                let summary = CacheEntryRecord.summary(
                    of: UnsafeRawBufferPointer(rebasing: payload[cursor.position...]))
            else { return }
            body(summary.size, summary.fileName)
        }
    }

    /// The totals now, under the manifest's exclusive lock.
    func currentCounts() throws(CacheError) -> CacheCounts {
        let totals = self.totals
        return try exclusively { transaction in
            try totals.read { () throws(CacheError) in try Self.count(transaction) }
        }
    }

    /// Starts a background trim to the limits unless one is already scheduled in this process.
    func trimSoon() {
        guard !limitTrimScheduled.exchange(true, ordering: .acquiringAndReleasing) else { return }
        Task.detached(priority: .utility) { [weak self] in
            var pause = Duration.milliseconds(2)
            while let cache = self {
                let outcome = cache.limitTrimTurn()
                cache.limitTrimScheduled.store(false, ordering: .releasing)
                // A set that crossed a limit while this turn ran found the flag raised and left
                // the trim to it: look again before leaving.
                guard outcome == .busy || (outcome == .trimmed && cache.isOverLimits()) else { return }
                guard !cache.limitTrimScheduled.exchange(true, ordering: .acquiringAndReleasing) else { return }
                if outcome == .busy {
                    try? await Task.sleep(for: pause)
                    pause = min(pause * 2, .milliseconds(50))
                }
            }
        }
    }

    /// What one turn of the limit trim did.
    enum LimitTrimOutcome: Sendable, Equatable {
        /// It trimmed.
        case trimmed
        /// The totals were within the limits already (another process trimmed).
        case withinLimits
        /// Another process (or thread) held `trim.lock`.
        case busy
        /// The cache is closed, or the trim failed (logged).
        case stopped
    }

    /// One try at trimming to the limits: skipped if the totals are already within them (another
    /// process trimmed), or if the cache is closed.
    func limitTrimTurn() -> LimitTrimOutcome {
        backgroundTurn.withLock { isClosed -> LimitTrimOutcome in
            guard !isClosed else { return .stopped }
            do {
                let ran = try withTrimLock(waiting: false) { () throws(CacheError) -> Bool in
                    guard try exceedsLimits(currentCounts()) else { return false }
                    _ = try applyLimits(configuration.limits)
                    return true
                }
                guard let ran else { return .busy }
                return ran ? .trimmed : .withinLimits
            } catch {
                logger.debug("trimming to the limits failed", metadata: ["error": "\(error)"])
                return .stopped
            }
        }
    }

    /// Whether the totals break the count or byte limit now (false if they cannot be read).
    func isOverLimits() -> Bool {
        guard let counts = try? currentCounts() else { return false }
        return exceedsLimits(counts)
    }
}
