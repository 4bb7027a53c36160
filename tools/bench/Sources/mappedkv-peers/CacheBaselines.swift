import Glibc
import MappedKV
import MappedKVCache
import Synchronization

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
    /// `crc32_1mib`: `CRC32.update` over one 1 MiB value in memory, whole, as many times as there
    /// are large values; per value. The value is checksummed once untimed first, so it is in the
    /// processor's cache, as each chunk of a checked get is when it is checksummed right after its
    /// read (50 values read afresh from memory took 109 µs each in one run here, against 43 µs:
    /// memory bandwidth, not the CRC). Every CRC is checked against the untimed one.
    @inline(never)
    static func crc32(data: CacheData) throws -> Double {
        guard let value = data.largeValues.first else { return .nan }
        let count = data.largeValues.count
        let expected = value.withUnsafeBytes { CRC32.update(0, $0) }
        var crcs: [UInt32] = []
        crcs.reserveCapacity(count)
        let elapsed = Clock.measure {
            for _ in 0..<count { crcs.append(value.withUnsafeBytes { CRC32.update(0, $0) }) }
        }
        guard crcs.allSatisfy({ $0 == expected }) else {
            throw BenchError("crc32_1mib: the CRC of the same value changed between passes")
        }
        return elapsed / Double(count)
    }
}

/// The least an LRU-ordered disk cache's get must add to note its access: the key's bytes and the
/// time copied into a log buffer under a lock, the log emptied when it fills (DiskCache's
/// access-time log does this much, and writes the log to its manifest about once a second).
final class AccessNoteFloor: Sendable {
    /// The buffer, how much of it is used and how many accesses were noted.
    private struct Log {
        let base: UnsafeMutableRawPointer
        var used = 0
        var noted = 0
    }

    private static let capacity = 1 << 16
    private let log = Mutex(Log(base: .allocate(byteCount: AccessNoteFloor.capacity, alignment: 8)))

    deinit { log.withLock { $0.base.deallocate() } }

    /// Notes an access to `key` now.
    func note(_ key: String) {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME_COARSE, &now)  // the clock DiskCache reads by default
        let milliseconds = UInt64(now.tv_sec) * 1_000 + UInt64(now.tv_nsec) / 1_000_000
        log.withLock { log in
            let copied: Void? = key.utf8.withContiguousStorageIfAvailable { utf8 in
                if log.used + utf8.count + 8 > Self.capacity { log.used = 0 }
                if let source = utf8.baseAddress {
                    (log.base + log.used).copyMemory(from: source, byteCount: min(utf8.count, Self.capacity - 8))
                }
                log.used += min(utf8.count, Self.capacity - 8)
            }
            if copied == nil { log.used = 0 }  // a bridged key: the bench's keys are native strings
            (log.base + log.used).storeBytes(of: milliseconds.littleEndian, as: UInt64.self)
            log.used += 8
            log.noted += 1
        }
    }

    /// How many accesses were noted.
    var noted: Int { log.withLock { $0.noted } }
}
