import ArgumentParser

/// The cache designs `--cache-designs` can name.
enum CacheDesign: String, CaseIterable, ExpressibleByArgument {
    case mappedkv = "mappedkvcache"
    case sqliteFiles = "sqlite-files"
    case filePerEntry = "file-per-entry"
    case plainFile = "plain-file"
    /// The floors the targets divide by: a `Mutex`-guarded dictionary for the memory rows, a
    /// multi-process MappedKV store with DiskCache's lock for the disk rows, the CRC-32 alone.
    case baseline
    /// The disk rows' MappedKV store with `flock`, for information.
    case mappedkvFlock = "mappedkv-flock"

    var displayName: String {
        switch self {
        case .mappedkv: "MappedKVCache"
        case .sqliteFiles: "SQLite + files"
        case .filePerEntry: "file per entry"
        case .plainFile: "plain file"
        case .baseline: "baseline"
        case .mappedkvFlock: "MappedKV flock"
        }
    }

    /// The design's colour in the chart.
    var colour: String {
        switch self {
        case .mappedkv: "#1f5fa8"
        case .sqliteFiles: "#8e44ad"
        case .filePerEntry: "#e07b00"
        case .plainFile: "#6c757d"
        case .baseline: "#2a9d3f"
        case .mappedkvFlock: "#8fd19e"
        }
    }

    /// How the design is built and driven, for the report.
    var setup: String {
        switch self {
        case .mappedkv:
            "MappedKVCache's `DiskCache(directory:configuration: DiskCacheConfiguration())` (defaults: multi-process "
                + "manifest, values up to 20 KiB inline, larger ones in files) through `set(_:forKey:)`, "
                + "`value(forKey:)`, `trim(toCount:)` and `statistics()`; the memory rows are "
                + "`MemoryCache<String, [UInt8]>(limits: MemoryCacheLimits(count: N))` (other parameters default) with `set(_:forKey:cost:)` and `value(forKey:)`"
        case .sqliteFiles:
            "YYKVStorage's design written here in Swift: libsqlite3 \(SQLiteStore.libraryVersion), WAL, synchronous=NORMAL, "
                + "prepared statements, one autocommit statement per operation; table manifest(key TEXT PRIMARY KEY, "
                + "filename, size, inline_data, modification_time, last_access_time, extended_data) indexed on "
                + "last_access_time; values over 20 KiB in files (temporary name + rename), smaller ones inline after "
                + "looking up and removing a former file; a get selects the row (and reads the file) and then updates "
                + "last_access_time; trim: 16 rows at a time by last_access_time, one DELETE (and unlink) each, then a WAL "
                + "checkpoint; statistics: SELECT count(*), SELECT sum(size)"
        case .filePerEntry:
            "PINDiskCache's design written here in Swift: one file per key named by a 64-bit hash of the key in hex, an "
                + "in-memory index (file name -> size, dates) built at open by readdir + fstatat; a set writes a temporary "
                + "file and renames it (no fsync), a get reads the whole file and moves the access date in the index; "
                + "trim: sort the index by access date and unlink the oldest; statistics: count the index and sum its sizes"
        case .plainFile:
            "the floor of the 1 MiB workload: one file per value, written to a temporary name and renamed, read whole "
                + "(open, fstat, read, close), with the same calls as the file-based designs; large_get_floor: the same "
                + "read of values written into another directory, each followed by its CRC-32"
        case .baseline:
            "memory rows: `Mutex<[String: [UInt8]]>` (Synchronization) with a FIFO ring of keys evicting the oldest "
                + "at the count limit N, nothing else; disk rows: MappedKV `Configuration(isMultiProcess: true, "
                + "processLock: \(DiskCacheDefaultLock.processLock.name))`, the lock of DiskCache's manifest "
                + "(`DiskCacheConfiguration().processLock`), `set(_:forKey:)` and `bytes(forKey:)` of the same 100-byte "
                + "values under the same keys; crc32_1mib: MappedKVFormat's `CRC32.update` over a 1 MiB value in memory, in the processor's cache"
        case .mappedkvFlock:
            "the baseline's disk rows with `processLock: .flock` (MappedKV's default, MMKV's protocol), for information"
        }
    }

    /// Runs the design's workloads: direct calls of the generic drivers with the concrete types, so
    /// each design's loops are specialized.
    func run(data: CacheData, sizes: CacheSizes, directory: String) throws -> CacheFigures {
        let n = sizes.keyCount(self)
        let trim = sizes.trimCount(self)
        var results: CacheFigures = [:]
        switch self {
        case .mappedkv:
            results = try MemoryWorkloads.run(MappedKVMemoryCache.self, data: data, entries: sizes.n)
            results.merge(try TieredCacheWorkloads.run(data: data, entries: sizes.n, directory: directory)) { $1 }
            results.merge(
                try CacheWorkloads.runDisk(
                    MappedKVDiskCache.self, data: data, n: n, trimEntries: trim, directory: directory)
            ) { $1 }
            results.merge(try CacheWorkloads.runLarge(MappedKVDiskCache.self, data: data, directory: directory)) { $1 }
        case .sqliteFiles:
            results = try CacheWorkloads.runDisk(
                SQLiteFilesCache.self, data: data, n: n, trimEntries: trim, directory: directory)
            results.merge(try CacheWorkloads.runLarge(SQLiteFilesCache.self, data: data, directory: directory)) { $1 }
        case .filePerEntry:
            results = try CacheWorkloads.runDisk(
                FilePerEntryCache.self, data: data, n: n, trimEntries: trim, directory: directory)
            results.merge(try CacheWorkloads.runLarge(FilePerEntryCache.self, data: data, directory: directory)) { $1 }
        case .plainFile:
            results = try CacheWorkloads.runLarge(PlainFileStore.self, data: data, directory: directory)
            results.merge(try CacheWorkloads.runLargeFloor(data: data, directory: directory)) { $1 }
        case .baseline:
            results = try MemoryWorkloads.run(FIFODictionaryCache.self, data: data, entries: sizes.n)
            results.merge(
                try CacheWorkloads.runStore(
                    MappedKVBytesStore<DiskCacheDefaultLock>.self, data: data, n: n, directory: directory)
            ) { $1 }
            results[.crc32] = try BaselineWorkloads.crc32(data: data)
        case .mappedkvFlock:
            results = try CacheWorkloads.runStore(
                MappedKVBytesStore<FlockLock>.self, data: data, n: n, directory: directory)
        }
        return results
    }
}

/// How many keys and values the cache comparison uses.
struct CacheSizes {
    /// Keys of the disk workloads, and the memory cache's count limit.
    var n: Int
    /// The file-per-entry design runs at most this many keys (and trims at most this many entries).
    var filePerEntryLimit: Int
    /// Entries of the cache trimmed to half.
    var trimEntries: Int
    /// 1 MiB values of the large-value workload.
    var largeValues: Int

    func keyCount(_ design: CacheDesign) -> Int { design == .filePerEntry ? min(n, filePerEntryLimit) : n }

    func trimCount(_ design: CacheDesign) -> Int {
        design == .filePerEntry ? min(trimEntries, filePerEntryLimit) : trimEntries
    }
}
