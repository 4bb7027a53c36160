// The metrics a cache reports when its disk configuration asks for them
// (`DiskCacheConfiguration.metrics`).
//
// Invariant: every metric object is made once, when the disk cache opens, and only then; a cache
// opened without options has no `CacheMetrics`, so each point that reports costs one test of an
// optional and nothing else. A `Cache` reports its memory tier through its disk side's metrics.

import CoreMetrics
import MappedKV

/// The metrics of one disk cache and of the memory tier of the ``Cache`` over it.
///
/// Labels (each after the options' prefix and a dot; the options' dimensions follow the ones
/// named here):
/// - `cache.hits` and `cache.misses`, `tier`: `memory` or `disk`, one per key looked up;
/// - `cache.evictions`, `tier` and `reason`: entries the cache dropped by itself (memory:
///   ``MemoryCacheEvictionReason``'s cases; disk: `expired`, `age`, `count`, `bytes`,
///   `freeSpace`, `damaged`);
/// - `cache.trims`: trims of the disk side this process ran (called or in the background);
/// - `cache.bytes` and `cache.entries`: the directory's value bytes and entries, as this process
///   last wrote them (after each of its writes, removals and trims).
@usableFromInline
final class CacheMetrics: Sendable {
    let memoryHits: Counter
    let memoryMisses: Counter
    let diskHits: Counter
    let diskMisses: Counter
    let memoryEvictions: [MemoryCacheEvictionReason: Counter]
    let diskEvictions: [DiskEvictionReason: Counter]
    let trims: Counter
    let bytes: Meter
    let entries: Meter

    /// Makes every metric.
    init(_ options: MetricsOptions) {
        memoryHits = options.counter("cache.hits", [("tier", "memory")])
        memoryMisses = options.counter("cache.misses", [("tier", "memory")])
        diskHits = options.counter("cache.hits", [("tier", "disk")])
        diskMisses = options.counter("cache.misses", [("tier", "disk")])
        var memoryEvictions: [MemoryCacheEvictionReason: Counter] = [:]
        for reason in MemoryCacheEvictionReason.allCases {
            memoryEvictions[reason] = options.counter(
                "cache.evictions", [("tier", "memory"), ("reason", reason.description)])
        }
        self.memoryEvictions = memoryEvictions
        var diskEvictions: [DiskEvictionReason: Counter] = [:]
        for reason in DiskEvictionReason.allCases {
            diskEvictions[reason] = options.counter("cache.evictions", [("tier", "disk"), ("reason", reason.rawValue)])
        }
        self.diskEvictions = diskEvictions
        trims = options.counter("cache.trims")
        bytes = options.meter("cache.bytes")
        entries = options.meter("cache.entries")
    }

    /// Counts a hit of the memory tier. Every count is a call, never inlined: a caller on a hot
    /// path holds only a test of the optional and a call.
    @usableFromInline @inline(never)
    func countMemoryHit() {
        memoryHits.increment()
    }

    /// Counts lookups of the memory tier.
    @inline(never)
    func countMemory(hits: Int, misses: Int) {
        if hits > 0 { memoryHits.increment(by: Int64(hits)) }
        if misses > 0 { memoryMisses.increment(by: Int64(misses)) }
    }

    /// Counts lookups of the disk side.
    @inline(never)
    func countDisk(hits: Int, misses: Int) {
        if hits > 0 { diskHits.increment(by: Int64(hits)) }
        if misses > 0 { diskMisses.increment(by: Int64(misses)) }
    }

    /// Counts an eviction from the memory tier.
    @inline(never)
    func countEviction(_ reason: MemoryCacheEvictionReason) {
        memoryEvictions[reason]?.increment()
    }

    /// Counts a trim of the disk side and what it evicted.
    @inline(never)
    func countTrim(_ evicted: [DiskEvictionReason: Int]) {
        trims.increment()
        for (reason, count) in evicted where count > 0 { diskEvictions[reason]?.increment(by: Int64(count)) }
    }

    /// Records the directory's totals as this process just wrote them.
    @inline(never)
    func record(_ counts: CacheCounts) {
        bytes.set(counts.bytes)
        entries.set(counts.count)
    }
}

/// Why a trim removed an entry from the disk side, as the `reason` dimension of
/// `cache.evictions` names it.
enum DiskEvictionReason: String, Sendable, CaseIterable {
    /// Its time to live ran out.
    case expired
    /// It was not accessed within the age limit.
    case age
    /// The count limit was exceeded.
    case count
    /// The byte limit was exceeded.
    case bytes
    /// The file system had less free space than the free-space limit.
    case freeSpace
    /// Its record could not be served.
    case damaged
}
