import MappedKVCache

/// What a `cache` stress child works on: a ``Cache`` of bytes (its own memory tier over the shared
/// disk cache, the default), or the shared ``DiskCache`` alone (`--disk-only`). Both see the same
/// directory, so the run's journals and final check do not depend on which one the children used.
enum CacheStressTarget {
    /// A memory tier of this process over the disk cache.
    case tiered(Cache<[UInt8]>)
    /// The disk cache alone.
    case disk(DiskCache)

    /// How many entries a child's memory tier keeps: half the shared keys, so that entries are
    /// also evicted from memory and read again from disk.
    static let memoryCountLimit = CacheStressValue.keyCount / 2

    /// Opens the cache in `directory` with `configuration`, with a memory tier unless `diskOnly`.
    init(directory: String, configuration: DiskCacheConfiguration, diskOnly: Bool) throws(CacheError) {
        if diskOnly {
            self = .disk(try DiskCache(directory: directory, configuration: configuration))
        } else {
            self = .tiered(
                try Cache<[UInt8]>(
                    directory: directory, memoryLimits: MemoryCacheLimits(count: Self.memoryCountLimit),
                    diskConfiguration: configuration))
        }
    }

    /// The shared disk cache.
    var disk: DiskCache {
        switch self {
        case .tiered(let cache): cache.disk
        case .disk(let disk): disk
        }
    }

    /// The value of `key`, or nil.
    func value(forKey key: String) throws -> [UInt8]? {
        switch self {
        case .tiered(let cache): try cache.value(forKey: key)
        case .disk(let disk): try disk.value(forKey: key)
        }
    }

    /// Stores `value` under `key`.
    func set(_ value: [UInt8], forKey key: String) throws {
        switch self {
        case .tiered(let cache): try cache.set(value, forKey: key)
        case .disk(let disk): try disk.set(value, forKey: key)
        }
    }

    /// Removes `key`.
    func removeValue(forKey key: String) throws {
        switch self {
        case .tiered(let cache): try cache.removeValue(forKey: key)
        case .disk(let disk): try disk.removeValue(forKey: key)
        }
    }

    /// Trims the disk cache to its limits (a memory tier keeps its own limits as it goes).
    func trim() throws {
        _ = try disk.trim()
    }

    /// Closes the disk cache.
    func close() {
        disk.close()
    }
}
