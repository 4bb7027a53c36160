import Dispatch
import Foundation
import Logging

/// A memory cache over a disk cache: reads look in memory first, then on disk, and a disk hit is
/// decoded once and kept in memory; writes go to both.
///
/// Values are turned into bytes by an injected ``CacheSerializer`` (JSON for `Codable` values by
/// default; ``BytesCacheSerializer`` and ``DataCacheSerializer`` store bytes as they are). The
/// memory side is this process's own; the disk side is shared with every process that opens the
/// directory, so a value another process set is found on disk, and one it removed may still be
/// served from this process's memory until that entry is evicted or removed here.
///
/// The synchronous methods do their file I/O on the calling thread; the `async` ones run it on a
/// dispatch queue of their own, so they never block Swift's cooperative thread pool.
///
/// ```swift
/// struct Profile: Codable, Sendable { var name: String }
/// let cache = try Cache<Profile>(directory: "/tmp/profiles")
/// try cache.set(Profile(name: "Ada"), forKey: "user-1")
/// let profile = try cache.value(forKey: "user-1")
/// ```
public final class Cache<Value: Sendable>: Sendable {
    /// The memory side (this process only).
    public let memory: MemoryCache<String, Value>
    /// The disk side (shared by every process that opens the directory).
    public let disk: DiskCache
    /// How values become bytes.
    public let serializer: any CacheSerializer<Value>
    private let queue = DispatchQueue(label: "MappedKVCache.Cache.io", attributes: .concurrent)

    /// Opens the disk side in `directory` and creates an empty memory side.
    ///
    /// - Parameters:
    ///   - directory: the disk cache's directory, created if missing.
    ///   - memoryLimits: the memory side's limits; a value's cost is its serialized size.
    ///   - diskConfiguration: the disk side's limits, inline threshold, key and trim interval.
    ///   - serializer: how values become bytes.
    ///   - logger: where the disk side logs; nil logs nothing.
    public init(
        directory: String, memoryLimits: MemoryCacheLimits = MemoryCacheLimits(count: 1_000),
        diskConfiguration: DiskCacheConfiguration = DiskCacheConfiguration(),
        serializer: some CacheSerializer<Value>, logger: Logger? = nil
    ) throws(CacheError) {
        self.memory = MemoryCache(limits: memoryLimits)
        self.disk = try DiskCache(directory: directory, configuration: diskConfiguration, logger: logger)
        self.serializer = serializer
    }

    /// The value of `key`: from memory, else from disk (then kept in memory), else nil.
    ///
    /// - Throws: ``CacheError`` from the disk side, or the serializer's error when the stored
    ///   bytes do not decode as a `Value` (the entry is then removed).
    public func value(forKey key: String) throws -> Value? {
        if let value = memory.value(forKey: key) { return value }
        guard let bytes = try disk.value(forKey: key) else { return nil }
        let value: Value
        do {
            value = try serializer.decode(bytes)
        } catch {
            try disk.removeValue(forKey: key)
            throw error
        }
        memory.set(value, forKey: key, cost: bytes.count)
        return value
    }

    /// Stores `value` under `key` in memory and on disk.
    ///
    /// - Parameters:
    ///   - value: the value to store.
    ///   - key: the entry's key.
    ///   - timeToLive: after this long the entry is a miss on both sides; nil never expires.
    public func set(_ value: Value, forKey key: String, timeToLive: Duration? = nil) throws {
        let bytes = try serializer.encode(value)
        try disk.set(bytes, forKey: key, timeToLive: timeToLive)
        memory.set(value, forKey: key, cost: bytes.count, timeToLive: timeToLive)
    }

    /// Removes `key` from both sides.
    public func removeValue(forKey key: String) throws(CacheError) {
        _ = memory.removeValue(forKey: key)
        try disk.removeValue(forKey: key)
    }

    /// Removes everything from both sides.
    public func removeAll() throws(CacheError) {
        memory.removeAll()
        try disk.removeAll()
    }

    /// Whether `key` is in memory or on disk.
    public func contains(_ key: String) throws(CacheError) -> Bool {
        if memory.contains(key) { return true }
        return try disk.contains(key)
    }

    /// Closes the disk side; the memory side is released with the cache.
    public func close() {
        disk.close()
    }

    // MARK: Async

    /// ``value(forKey:)`` with the disk read off the cooperative thread pool.
    public func value(forKey key: String) async throws -> Value? {
        if let value = memory.value(forKey: key) { return value }
        return try await offPool { try self.value(forKey: key) }
    }

    /// ``set(_:forKey:timeToLive:)`` with the disk write off the cooperative thread pool.
    public func set(_ value: Value, forKey key: String, timeToLive: Duration? = nil) async throws {
        try await offPool { try self.set(value, forKey: key, timeToLive: timeToLive) }
    }

    /// ``removeValue(forKey:)`` with the disk write off the cooperative thread pool.
    public func removeValue(forKey key: String) async throws {
        try await offPool { try self.removeValue(forKey: key) }
    }

    /// ``removeAll()`` with the disk work off the cooperative thread pool.
    public func removeAll() async throws {
        try await offPool { try self.removeAll() }
    }

    /// Runs `body` on the cache's own queue and resumes with its result.
    private func offPool<R: Sendable>(_ body: @escaping @Sendable () throws -> R) async throws -> R {
        try await withCheckedThrowingContinuation { continuation in
            queue.async { continuation.resume(with: Result { try body() }) }
        }
    }
}

extension Cache where Value: Codable {
    /// A cache whose values are stored as JSON.
    public convenience init(
        directory: String, memoryLimits: MemoryCacheLimits = MemoryCacheLimits(count: 1_000),
        diskConfiguration: DiskCacheConfiguration = DiskCacheConfiguration(), logger: Logger? = nil
    ) throws(CacheError) {
        try self.init(
            directory: directory, memoryLimits: memoryLimits, diskConfiguration: diskConfiguration,
            serializer: JSONCacheSerializer<Value>(), logger: logger)
    }
}

extension Cache where Value == [UInt8] {
    /// A cache of bytes, stored as they are.
    public convenience init(
        directory: String, memoryLimits: MemoryCacheLimits = MemoryCacheLimits(count: 1_000),
        diskConfiguration: DiskCacheConfiguration = DiskCacheConfiguration(), logger: Logger? = nil
    ) throws(CacheError) {
        try self.init(
            directory: directory, memoryLimits: memoryLimits, diskConfiguration: diskConfiguration,
            serializer: BytesCacheSerializer(), logger: logger)
    }
}

extension Cache where Value == Data {
    /// A cache of `Data`, stored as it is.
    public convenience init(
        directory: String, memoryLimits: MemoryCacheLimits = MemoryCacheLimits(count: 1_000),
        diskConfiguration: DiskCacheConfiguration = DiskCacheConfiguration(), logger: Logger? = nil
    ) throws(CacheError) {
        try self.init(
            directory: directory, memoryLimits: memoryLimits, diskConfiguration: diskConfiguration,
            serializer: DataCacheSerializer(), logger: logger)
    }
}
