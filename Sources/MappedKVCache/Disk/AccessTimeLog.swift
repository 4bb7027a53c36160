import MappedKV

/// Access times noticed by this process and not yet written to the manifest.
///
/// A read records its key's time here; the times are written (under one exclusive lock) once
/// ``DiskCacheConfiguration/accessTimeFlushInterval`` has passed since the last write, so the
/// LRU order the manifest holds is at most that much behind this process's reads.
struct AccessTimeLog: Sendable {
    /// Accesses in the order they happened: an append per read, no hashing. A key may appear
    /// more than once; the latest time wins. Entries that were set, removed or replaced since need
    /// no forgetting: an entry's LRU time is the later of its modification and its access, and a
    /// time for a key with no entry is never written.
    private var log: [(key: String, time: UInt64)] = []
    /// When the pending times were last written.
    var lastFlush: UInt64

    /// How many accesses are kept before they are written regardless of the interval.
    static let capacity = 65_536

    init(lastFlush: UInt64) { self.lastFlush = lastFlush }

    /// The latest pending access time per key.
    var pending: [String: UInt64] {
        var latest: [String: UInt64] = [:]
        latest.reserveCapacity(log.count)
        for (key, time) in log { latest[key] = max(latest[key] ?? 0, time) }
        return latest
    }

    mutating func forgetAll() { log = [] }

    /// Records an access; returns the times to write now, if the interval has passed or the log is full.
    mutating func note(_ key: String, at now: UInt64, interval: UInt64) -> [String: UInt64]? {
        log.append((key, now))
        let (due, overflow) = lastFlush.addingReportingOverflow(interval)
        // An interval past the end of time: written only when full, on trim or on close.
        guard log.count >= Self.capacity || (!overflow && now >= due) else { return nil }
        return takeAll(now: now)
    }

    /// Every pending time, which are no longer pending.
    mutating func takeAll(now: UInt64) -> [String: UInt64] {
        lastFlush = now
        defer { log = [] }
        return pending
    }
}

extension DiskCache {
    /// Records an access to `key` at `now`, writing the coalesced times when they are due.
    func noteAccess(_ key: String, at now: UInt64) {
        let interval = configuration.accessTimeFlushInterval.cacheMilliseconds
        guard let due = accessTimes.withLock({ $0.note(key, at: now, interval: interval) }) else { return }
        do { try write(accessTimes: due) } catch {
            logger.debug("could not write access times", metadata: ["error": "\(error)"])
        }
    }

    /// Writes the access times this process has noticed to the manifest now.
    public func flushAccessTimes() throws(CacheError) {
        let now = configuration.clock.now()
        let due = accessTimes.withLock { $0.takeAll(now: now) }
        try write(accessTimes: due)
    }

    private func write(accessTimes due: [String: UInt64]) throws(CacheError) {
        guard !due.isEmpty else { return }
        try exclusively { transaction in
            for (key, time) in due where try transaction.contains(Self.entryKey(key)) {
                try transaction.set(time, forKey: Self.accessKey(key))
            }
        }
    }
}
