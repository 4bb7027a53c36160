import MappedKV

/// Access times noticed by this process and not yet written to the manifest.
///
/// A read records its key's time here; the times are written (under one exclusive lock) once
/// ``DiskCacheConfiguration/accessTimeFlushInterval`` has passed since the last write, so the
/// LRU order the manifest holds is at most that much behind this process's reads.
struct AccessTimeLog: Sendable {
    /// The latest access time per key, in milliseconds since 1970.
    var pending: [String: UInt64] = [:]
    /// When the pending times were last written.
    var lastFlush: UInt64

    mutating func forget(_ key: String) {
        if !pending.isEmpty { pending[key] = nil }
    }

    mutating func forgetAll() { pending = [:] }

    /// Records an access; returns the times to write now, if the interval has passed.
    mutating func note(_ key: String, at now: UInt64, interval: UInt64) -> [String: UInt64]? {
        pending[key] = now
        let (due, overflow) = lastFlush.addingReportingOverflow(interval)
        guard !overflow, now >= due else { return nil }  // an interval past the end of time: never
        return takeAll(now: now)
    }

    /// Every pending time, which are no longer pending.
    mutating func takeAll(now: UInt64) -> [String: UInt64] {
        lastFlush = now
        defer { pending = [:] }
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
