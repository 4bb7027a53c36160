/// The workloads of the cache comparison (`--cache`), in report order.
enum CacheWorkload: String, CaseIterable {
    /// N sets of new keys into a MemoryCache already holding N entries at its count limit N, so every
    /// set evicts one.
    case memorySet = "memory_set"
    /// N sets of the same new keys in a random order fixed by a seed, into a second cache filled
    /// the same way.
    case memorySetRandom = "memory_set_random"
    /// N gets of the keys just set (every one a hit; checked).
    case memoryGet = "memory_get"
    /// N more gets of those keys in a random order fixed by a seed (checked).
    case memoryGetRandom = "memory_get_random"
    /// `memory_get` through `Cache<[UInt8]>.value(forKey:)` on a cache whose memory side went
    /// through the same sets: every get a memory hit (checked against its statistics).
    case cacheMemoryGet = "cache_memory_get"
    /// `memory_get_random` through `Cache<[UInt8]>.value(forKey:)`.
    case cacheMemoryGetRandom = "cache_memory_get_random"
    /// `cache_memory_get`'s gets straight from that `Cache`'s own memory tier (its `MemoryCache`,
    /// with no check of other processes' changes), timed in the same rounds: the hit without
    /// coherence on the very entries, layout and keys of the hit with it.
    case cacheTierGet = "cache_tier_get"
    /// `cache_memory_get_random`'s gets straight from the `Cache`'s memory tier.
    case cacheTierGetRandom = "cache_tier_get_random"
    /// N sets of 100-byte values under new keys into an empty disk cache.
    case diskSet = "disk_set"
    /// N sets of the same values and keys in a random order fixed by a seed, into another empty cache.
    case diskSetRandom = "disk_set_random"
    /// Close and reopen of the disk cache holding those N entries (whatever it loads at open).
    case diskOpen = "disk_open"
    /// N gets of those entries right after the reopen, so none is in the process's memory (checked).
    case diskGet = "disk_get"
    /// N gets of those entries in a random order fixed by a seed, right after another reopen (checked).
    case diskGetRandom = "disk_get_random"
    /// The floor of a checked, LRU-ordered disk get, timed on the baseline store only: `disk_get`'s
    /// gets after another reopen, each also taking the CRC-32 of the value and noting the key and
    /// the time in a log under a lock (what DiskCache's checks and access-time log must add).
    case diskGetFloor = "disk_get_floor"
    /// The floor of a checked disk set that keeps running totals, timed on the baseline store only:
    /// `disk_set`'s sets into another empty store, each a record of the value behind a 16-byte
    /// header under the key with a 2-byte prefix (both made before the clock starts), after taking
    /// the CRC-32 of the value and reading the clock, and followed by an update of two counters in
    /// a mapped page (what DiskCache's record and totals must add).
    case diskSetFloor = "disk_set_floor"
    /// Sets of 1 MiB values under new keys.
    case largeSet = "large_set"
    /// Gets of those values after a reopen (checked).
    case largeGet = "large_get"
    /// The floor of a checked 1 MiB get, timed on the plain file only: `large_set`'s sets into
    /// another directory and a reopen, then each value read whole and its CRC-32 taken (checked
    /// against the value's): what a get that checks its value must do at least, beside the
    /// plain file's `large_get`, a read that checks nothing.
    case largeGetFloor = "large_get_floor"
    /// The CRC-32 of a 1 MiB value in the processor's cache (`CRC32.update`): what a checked get
    /// adds to a read.
    case crc32 = "crc32_1mib"
    /// A trim of a reopened cache of 50,000 100-byte entries down to half, the least recently used first.
    case trim
    /// The count and total size of the N entries of `disk_get`'s cache.
    case statistics

    /// How the figures are quoted: samples are always nanoseconds (per operation, per value or per call).
    enum Unit {
        case nanoseconds, microseconds, milliseconds

        var scale: Double {
            switch self {
            case .nanoseconds: 1
            case .microseconds: 1e3
            case .milliseconds: 1e6
            }
        }
    }

    var unit: Unit {
        switch self {
        case .memorySet, .memorySetRandom, .memoryGet, .memoryGetRandom, .cacheMemoryGet, .cacheMemoryGetRandom,
            .cacheTierGet, .cacheTierGetRandom, .diskSet, .diskSetRandom, .diskGet, .diskGetRandom, .diskGetFloor,
            .diskSetFloor:
            .nanoseconds
        case .largeSet, .largeGet, .largeGetFloor, .crc32: .microseconds
        case .diskOpen, .trim, .statistics: .milliseconds
        }
    }

    /// The row's heading in the tables, with its unit.
    var label: String {
        switch unit {
        case .nanoseconds: "\(rawValue) (ns/op)"
        case .microseconds: "\(rawValue) (µs per 1 MiB value)"
        case .milliseconds: "\(rawValue) (ms)"
        }
    }

    /// The chart's second line under the group, if the figure is not per operation.
    var chartNote: String? {
        switch unit {
        case .nanoseconds: nil
        case .microseconds: "(per 1 MiB value)"
        case .milliseconds: "(per call)"
        }
    }

    /// Whether the row is a memory cache's (the other rows are the disk caches' and the CRC's).
    var isMemory: Bool {
        switch self {
        case .memorySet, .memorySetRandom, .memoryGet, .memoryGetRandom, .cacheMemoryGet, .cacheMemoryGetRandom,
            .cacheTierGet, .cacheTierGetRandom:
            true
        default: false
        }
    }

    /// A figure in the row's unit: "1,234" ns, "345" µs (one decimal under 10), "12.34" ms.
    func format(_ nanoseconds: Double) -> String {
        guard nanoseconds.isFinite else { return "-" }
        let value = nanoseconds / unit.scale
        switch unit {
        case .nanoseconds: return Format.grouped(value)
        case .microseconds: return value >= 10 ? Format.grouped(value) : Format.fixed(value, 1)
        case .milliseconds: return Format.fixed(value, 2)
        }
    }
}

/// The keys and values every design gets, built once before anything is timed.
///
/// Value i begins with i as 8 little-endian bytes, so a read can be checked against its key; the
/// rest is filler.
struct CacheData: Sendable {
    static let valueSize = 100
    static let largeSize = 1 << 20
    /// `key-<i>`: the disk caches' keys.
    let keys: [String]
    /// 100-byte values, one per key.
    let values: [[UInt8]]
    /// `mem-<i>`, twice the memory cache's count limit: the first half fills it, the second half is timed.
    let memoryKeys: [String]
    /// `large-<i>` and their 1 MiB values.
    let largeKeys: [String]
    let largeValues: [[UInt8]]

    init(keys: Int, memoryEntries: Int, largeValues: Int) {
        self.keys = (0..<keys).map { "key-\($0)" }
        values = (0..<keys).map { Self.value($0, size: Self.valueSize) }
        memoryKeys = (0..<2 * memoryEntries).map { "mem-\($0)" }
        largeKeys = (0..<largeValues).map { "large-\($0)" }
        self.largeValues = (0..<largeValues).map { Self.value($0, size: Self.largeSize) }
    }

    static func value(_ i: Int, size: Int) -> [UInt8] {
        var value = [UInt8](repeating: UInt8(truncatingIfNeeded: i &* 31 &+ 7), count: size)
        withUnsafeBytes(of: UInt64(i).littleEndian) { tag in
            for (offset, byte) in tag.enumerated() where offset < size { value[offset] = byte }
        }
        return value
    }

    /// The index a value was made for (its first 8 bytes), or 0 if it is shorter.
    @inline(__always)
    static func tag(_ value: [UInt8]) -> UInt64 {
        guard value.count >= 8 else { return 0 }
        return value.withUnsafeBytes { UInt64(littleEndian: $0.loadUnaligned(as: UInt64.self)) }
    }

    /// The sum of the tags of values 0..<count.
    static func expectedTags(_ count: Int) -> UInt64 { UInt64(count) * UInt64(max(count - 1, 0)) / 2 }
}
