import MappedKV
import MappedKVCache
import MappedKVFormat

// The baselines of the cache targets, timed in the same rounds as the caches: a multi-process
// MappedKV store of the same bytes (the floor under DiskCache's manifest), opened with the lock
// DiskCache's manifest uses, and the CRC-32 of a 1 MiB value in memory (what a checked get adds
// to a plain read). The memory floor is FIFODictionaryCache.

/// The inter-process lock a baseline store is opened with.
protocol ProcessLockChoice {
    static var processLock: ProcessLock { get }
}

/// The lock DiskCache's default configuration gives its manifest, read from that configuration
/// at run time, so the baseline follows the cache if its default changes.
enum DiskCacheDefaultLock: ProcessLockChoice {
    static var processLock: ProcessLock { DiskCacheConfiguration().processLock }
}

/// MMKV's `flock`, MappedKV's default, for information beside DiskCache's lock.
enum FlockLock: ProcessLockChoice {
    static var processLock: ProcessLock { .flock }
}

extension ProcessLock {
    /// `.flock` or `.sharedMemory`, as the report names it.
    var name: String { self == .flock ? ".flock" : ".sharedMemory" }
}

/// A multi-process MappedKV store (`Configuration(isMultiProcess: true, processLock:)`) of bytes
/// values under the cache's keys, through `set(_:forKey:)` and `bytes(forKey:)`.
final class MappedKVBytesStore<Lock: ProcessLockChoice>: BenchValueStore {
    static var storeID: String { "baseline" }
    let store: MappedKV

    init(directory: String) throws {
        store = try MappedKV(
            id: Self.storeID, directory: try Scratch.existingDirectory(directory),
            configuration: Configuration(isMultiProcess: true, processLock: Lock.processLock))
    }

    // Not inlined, as MappedKVDiskCache's calls are not.
    @inline(never)
    func set(_ value: [UInt8], forKey key: String) throws { try store.set(value, forKey: key) }

    @inline(never)
    func value(forKey key: String) throws -> [UInt8]? { try store.bytes(forKey: key) }

    func close() throws { store.close() }
}

enum BaselineWorkloads {
    /// `crc32_1mib`: `CRC32.update` over each 1 MiB value of the data where it lies in memory, per
    /// value. The CRCs are checked against a second, untimed pass.
    @inline(never)
    static func crc32(data: CacheData) throws -> Double {
        let values = data.largeValues
        var timed: [UInt32] = []
        timed.reserveCapacity(values.count)
        CacheWorkloads.settle()
        let elapsed = Clock.measure {
            for i in 0..<values.count { timed.append(values[i].withUnsafeBytes { CRC32.update(0, $0) }) }
        }
        let again = values.map { $0.withUnsafeBytes { CRC32.update(0, $0) } }
        guard timed == again, Set(timed).count == values.count else {
            throw BenchError("crc32_1mib: the CRCs of the \(values.count) values differ between passes or repeat")
        }
        return elapsed / Double(values.count)
    }
}
