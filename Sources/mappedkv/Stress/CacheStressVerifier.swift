import MappedKV
import MappedKVCache

/// The final check of a `cache` stress run, after every child has ended:
///
/// - Every journal is well formed, has no `V` line (a child's get returned bytes not put for its
///   key, or a value its own incarnation had replaced, or the cache failed) and ends with `D`.
/// - No get was stale across processes: ``CacheStressTimeline/staleReads(staleness:)`` (no get
///   returned a value older than the last write of its key acknowledged 50 ms before it began).
/// - After a final ``DiskCache/trim()`` to the run's limits, ``DiskCache/verify(repair:)`` finds
///   nothing, the value bytes are within the byte limit, and no orphan is left.
/// - Every entry left is a whole value of its key.
struct CacheStressVerifier {
    /// The run's directory, which is the cache's.
    var root: String
    /// The cache's key, or nil for a plain cache.
    var cryptKey: CryptKey?
    /// The cache's byte limit, or nil for none.
    var byteLimit: Int?

    /// The violations found in the children's `histories` and the `timeline` of the same
    /// journals, in journal, staleness, cache, entry order.
    func verify(_ histories: [StressHistory], timeline: CacheStressTimeline) -> [String] {
        var violations = StressVerifier.journalViolations(histories) + timeline.staleReads()
        let cache: DiskCache
        do {
            cache = try DiskCache(
                directory: root,
                configuration: CacheStressWorker.configuration(byteLimit: byteLimit, cryptKey: cryptKey))
        } catch {
            return violations + ["verification could not open the cache: \(error)"]
        }
        defer { cache.close() }
        do {
            try cache.trim()
            violations += try cache.verify().map { "the cache does not verify after a trim: \($0)" }
            let statistics = try cache.statistics()
            if let byteLimit, statistics.bytes > byteLimit {
                violations.append(
                    "the cache holds \(statistics.bytes) value bytes after a trim, above the byte limit \(byteLimit)")
            }
            if statistics.orphanCount != 0 {
                violations.append("\(statistics.orphanCount) orphans are left after a trim")
            }
            for entry in try cache.entries() {
                guard let bytes = try cache.value(forKey: entry.key) else {
                    violations.append("key \(entry.key) is listed, but reading it is a miss")
                    continue
                }
                if case .invalid(let problem) = CacheStressValue.check(bytes, expectedKey: entry.key) {
                    violations.append("key \(entry.key) left in the cache: \(problem)")
                }
            }
        } catch {
            violations.append("verification failed to read the cache: \(error)")
        }
        return violations
    }
}
