import Glibc
import MappedKV

/// The limits a disk cache is trimmed to, oldest access first. Every limit is optional.
public struct DiskCacheLimits: Sendable, Equatable {
    /// The most entries to keep.
    public var count: Int?
    /// The most value bytes to keep (inline and file values alike; headers and the manifest's own
    /// overhead are not counted).
    public var bytes: Int?
    /// Entries not accessed for longer than this are removed.
    public var age: Duration?
    /// Trim until the file system holding the cache has at least this many bytes free (as
    /// `statvfs` reports them to an unprivileged process), or the cache is empty.
    public var freeSpace: Int?

    /// Limits; nil means no limit of that kind.
    public init(count: Int? = nil, bytes: Int? = nil, age: Duration? = nil, freeSpace: Int? = nil) {
        self.count = count
        self.bytes = bytes
        self.age = age
        self.freeSpace = freeSpace
    }

    /// Whether any limit is set.
    public var isEmpty: Bool { count == nil && bytes == nil && age == nil && freeSpace == nil }
}

/// Where a disk cache reads the time: milliseconds since 1970. Tests inject one they advance by hand.
public struct CacheClock: Sendable {
    /// The current time in milliseconds since 1970.
    public let now: @Sendable () -> UInt64

    /// A clock that calls `now`.
    public init(_ now: @escaping @Sendable () -> UInt64) { self.now = now }

    /// The system's wall clock (`CLOCK_REALTIME`), exact to the millisecond.
    public static let system = CacheClock { milliseconds(of: CLOCK_REALTIME) }

    /// The system's wall clock read at the kernel's tick (`CLOCK_REALTIME_COARSE`): the default
    /// of ``DiskCacheConfiguration``.
    ///
    /// Every get and set reads the clock. A coarse reading is cheaper than an exact one
    /// (`tools/microbench/clocks.c`), but advances only once per tick (1 to 10 ms): modification
    /// and access times are then that granular, and times to live
    /// are honoured to within a tick, as ``MemoryCacheClock/coarse`` does for the memory tier.
    /// Processes that share a directory read the same kernel clock either way.
    public static let coarse = CacheClock { milliseconds(of: CLOCK_REALTIME_COARSE) }

    /// The time of the system clock `id` in milliseconds since 1970.
    private static func milliseconds(of id: clockid_t) -> UInt64 {
        var time = timespec()
        clock_gettime(id, &time)
        return UInt64(max(0, time.tv_sec)) * 1000 + UInt64(max(0, time.tv_nsec)) / 1_000_000
    }
}

/// How a ``DiskCache`` is opened.
public struct DiskCacheConfiguration: Sendable {
    /// The limits the cache keeps by itself, and that ``DiskCache/trim()`` applies on demand.
    ///
    /// The count and byte limits are kept after every write: a set that takes the directory past
    /// one starts a trim on a background task and returns without waiting for it (in at most one
    /// process at a time; a process that finds another one trimming waits for it in the
    /// background and looks again). "Within the limits" means: once that trim has run (its time
    /// grows with the number of entries), the directory holds at most `count` entries and
    /// `bytes` value bytes, counting every process's writes recorded before the trim took the
    /// manifest's lock; writes after that start the next trim. The age and free-space limits are
    /// applied by the periodic trim, every ``trimInterval``. A process killed in the middle of a
    /// write can leave the running counts off by that entry until the next trim recounts them.
    public var limits: DiskCacheLimits
    /// Values up to this many bytes live inside the manifest; larger ones in their own file.
    /// The default, 20 KiB, is about where files overtake an embedded database for reads.
    public var inlineThreshold: Int
    /// Encrypts the manifest (with the store's AES-CFB) and every value file (with its own random
    /// IV). A cache opened with the wrong key, or none, is refused without changing anything.
    public var cryptKey: CryptKey?
    /// How often the cache trims itself to all of ``limits`` in the background (in at most one
    /// process at a time), which is what applies the age and free-space limits and collects
    /// orphan files; 60 s by default, nil never (the count and byte limits still hold after
    /// every write).
    public var trimInterval: Duration?
    /// How long access times are coalesced in memory before they are written to the manifest, so
    /// reads are not writes. LRU order across processes is exact to within this interval.
    public var accessTimeFlushInterval: Duration
    /// The time to live of a set that gives none (PINCache's `ttlCache`); nil, the default, keeps
    /// such entries until they are removed or trimmed.
    public var defaultTimeToLive: Duration?
    /// The clock for modification, access and expiry times: ``CacheClock/coarse`` unless set.
    public var clock: CacheClock
    /// The manifest store's inter-process lock. The default, `ProcessLock.sharedMemory`, takes
    /// no system call to lock a set: a cache directory is MappedKV's own format, which no MMKV
    /// process shares. Every process that uses one directory must open it with the same lock
    /// (an open with the other fails with `MappedKVError.modeConflict`).
    public var processLock: ProcessLock
    /// What opening does when the manifest is damaged: refuse (the default: throw and change
    /// nothing), or move it aside with the value files and start empty (see
    /// ``DiskCacheDamagedManifestPolicy``).
    public var onDamagedManifest: DiskCacheDamagedManifestPolicy = .refuse
    /// Report hits, misses, evictions, trims and the directory's totals through swift-metrics
    /// under these options' label prefix (see `MetricsOptions`); a ``Cache`` reports its memory
    /// tier under the same options. Nil, the default, reports nothing and creates no metric.
    public var metrics: MetricsOptions?

    /// Creates a configuration; by default no limits, 20 KiB inline threshold, plain, a periodic trim every 60 s.
    public init(
        limits: DiskCacheLimits = DiskCacheLimits(), inlineThreshold: Int = 20 * 1024, cryptKey: CryptKey? = nil,
        trimInterval: Duration? = .seconds(60), accessTimeFlushInterval: Duration = .seconds(1),
        defaultTimeToLive: Duration? = nil, clock: CacheClock = .coarse, processLock: ProcessLock = .sharedMemory,
        metrics: MetricsOptions? = nil
    ) {
        self.metrics = metrics
        self.processLock = processLock
        self.defaultTimeToLive = defaultTimeToLive
        self.limits = limits
        self.inlineThreshold = inlineThreshold
        self.cryptKey = cryptKey
        self.trimInterval = trimInterval
        self.accessTimeFlushInterval = accessTimeFlushInterval
        self.clock = clock
    }
}

extension Duration {
    /// Whole milliseconds, rounded up, clamped at zero and at `UInt64.max`.
    var cacheMilliseconds: UInt64 {
        let (seconds, attoseconds) = components
        guard self > .zero else { return 0 }
        let millis = attoseconds / 1_000_000_000_000_000 + (attoseconds % 1_000_000_000_000_000 > 0 ? 1 : 0)
        let (whole, overflow) = UInt64(max(0, seconds)).multipliedReportingOverflow(by: 1000)
        let (total, carry) = whole.addingReportingOverflow(UInt64(max(0, millis)))
        return overflow || carry ? .max : total
    }
}
