import Foundation
import Logging

// The `async` forms of `Cache`'s calls, and the initializers for the common value types.
//
// Invariant: file I/O never runs on Swift's cooperative thread pool: an async call that may touch
// the disk hops to the cache's own dispatch queue; a memory hit is answered where it is.

extension Cache {
    /// ``value(forKey:)`` with the disk read off the cooperative thread pool.
    @inlinable
    public func value(forKey key: String) async throws -> Value? {
        try catchUp()
        if let value = memory.value(forKey: key) {
            metrics?.countMemoryHit()
            return value
        }
        guard let fill = try await offPool({ try self.fillFromDisk(forKey: key) }) else { return nil }
        return keep(fill, forKey: key)
    }

    /// ``set(_:forKey:cost:timeToLive:extendedData:)`` with the disk write off the cooperative thread pool.
    @inlinable
    public func set(
        _ value: Value, forKey key: String, cost: Int? = nil, timeToLive: Duration? = nil,
        extendedData: [UInt8]? = nil
    ) async throws {
        try await offPool {
            try self.set(value, forKey: key, cost: cost, timeToLive: timeToLive, extendedData: extendedData)
        }
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
    @usableFromInline
    func offPool<R: Sendable>(_ body: @escaping @Sendable () throws -> R) async throws -> R {
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
