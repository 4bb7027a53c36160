// Vapor's `Cache` over a MappedKV disk cache directory that several app processes share live.
// Invariants: every call does its work on the calling thread and returns an already completed
// future on the cache's event loop (the request's, through `for(_:)`), so nothing waits for another
// thread; an absent or expired key is nil; a nil value or a lifetime of zero or less removes the
// key; and a stored value of another type is an error (`MappedKVVaporError`), never a crash.

import MappedKVCache
import NIOCore
import Vapor

/// A Vapor `Cache` whose entries live in a MappedKV `DiskCache` directory, shared by every process
/// that opens the same directory on the host.
///
/// Make one with `app.caches.use(.mappedKV(directory:))`; `app.cache` and `req.cache` then return
/// it. Values are stored as JSON. A value written by one process is read by another as soon as the
/// write returns.
///
/// Each call reads or writes the directory's memory-mapped manifest on the calling thread (a few
/// microseconds; values larger than the directory's inline threshold, 20 KiB by default, are a file
/// read) and completes its future at once.
public struct MappedKVVaporCache: Vapor.Cache, Sendable {
    /// The entries, under the cache's key prefix.
    let entries: JSONEntries
    /// The loop the returned futures belong to.
    let eventLoop: any EventLoop

    /// The area of the cache's keys in the directory, before the namespace.
    static let area = "vapor.cache"

    /// The prefix of the cache's keys in the default namespace.
    static let keyPrefix = KeyNamespace(area: area, namespace: nil).prefix

    /// A cache over `disk`, completing its futures on `eventLoop`.
    ///
    /// - Parameters:
    ///   - disk: the directory, opened by the caller, who also closes it.
    ///   - namespace: the namespace of this application's entries; nil (the default) is the
    ///     namespace of the first release's entries.
    ///   - eventLoop: the loop of the returned futures.
    public init(disk: DiskCache, namespace: String? = nil, eventLoop: any EventLoop) {
        let prefix = KeyNamespace(area: Self.area, namespace: namespace).prefix
        self.init(entries: JSONEntries(disk: .success(disk), prefix: prefix), eventLoop: eventLoop)
    }

    /// A cache over `entries`, completing its futures on `eventLoop`.
    init(entries: JSONEntries, eventLoop: any EventLoop) {
        self.entries = entries
        self.eventLoop = eventLoop
    }

    /// The value under `key` decoded from JSON as `type`; nil when absent or expired.
    ///
    /// The future fails with ``MappedKVVaporError/valueDoesNotDecode(key:type:reason:)`` when the
    /// stored value is not a `type`.
    public func get<T>(_ key: String, as type: T.Type) -> EventLoopFuture<T?> where T: Decodable & Sendable {
        // A `do`/`catch` rather than `makeCompletedFuture(withResultOf:)`, whose generic `Result`
        // costs this unspecialized call about 4% of a get (perf, VaporMappedKVBench).
        do {
            return eventLoop.makeSucceededFuture(try entries.value(forKey: key, as: type))
        } catch {
            return eventLoop.makeFailedFuture(error)
        }
    }

    /// Stores `value` under `key` with no expiry (unless the directory has a default time to
    /// live); a nil `value` removes the key.
    public func set<T>(_ key: String, to value: T?) -> EventLoopFuture<Void> where T: Encodable & Sendable {
        set(key, to: value, expiresIn: nil)
    }

    /// Stores `value` under `key`, a miss after `expirationTime` (nil: no expiry unless the
    /// directory has a default time to live); a nil `value`, or a time of zero or less, removes
    /// the key.
    public func set<T>(
        _ key: String, to value: T?, expiresIn expirationTime: CacheExpirationTime?
    ) -> EventLoopFuture<Void> where T: Encodable & Sendable {
        eventLoop.makeCompletedFuture {
            let lifetime = expirationTime.map(EntryLifetime.init)
            guard let value, lifetime != .some(.over) else {
                return try entries.removeValue(forKey: key)
            }
            let timeToLive: Duration? =
                switch lifetime {
                case .some(.lasting(let duration)): duration
                case .some(.over), .none: nil
                }
            try entries.set(value, forKey: key, timeToLive: timeToLive)
        }
    }

    /// Adds `delta` to the counter under `key` and returns its new value, atomically across every
    /// process that shares the directory.
    ///
    /// A missing (or expired) counter starts at zero and, when `expirationTime` is given, expires
    /// that long after this call; an existing counter keeps the expiry it was created with, so a
    /// counter per time window lasts one window however often it is incremented. The counter is
    /// stored as its decimal digits, a JSON number, so `get(key, as: Int.self)` reads it.
    ///
    /// ```swift
    /// let views = try await req.cache.increment("views:\(id)")
    /// ```
    ///
    /// The future fails with ``MappedKVVaporError/notACounter(key:)`` when the value under `key`
    /// is something else, ``MappedKVVaporError/counterOverflow(key:)`` when the sum would leave the
    /// range of `Int`, and ``MappedKVVaporError/counterExpiryNotPositive(key:)`` for a time of zero
    /// or less; nothing is changed then.
    public func increment(
        _ key: String, by delta: Int = 1, expiresIn expirationTime: CacheExpirationTime? = nil
    ) -> EventLoopFuture<Int> {
        eventLoop.makeCompletedFuture { try incrementNow(key, by: delta, expiresIn: expirationTime) }
    }

    /// Adds `delta` to the counter under `key` and returns its new value, as the form that
    /// returns a future does, with the same errors thrown.
    public func increment(
        _ key: String, by delta: Int = 1, expiresIn expirationTime: CacheExpirationTime? = nil
    ) async throws -> Int {
        try incrementNow(key, by: delta, expiresIn: expirationTime)
    }

    /// The increment, on the calling thread.
    private func incrementNow(
        _ key: String, by delta: Int, expiresIn expirationTime: CacheExpirationTime?
    ) throws -> Int {
        let timeToLive: Duration?
        switch expirationTime.map(EntryLifetime.init) {
        case .none: timeToLive = nil
        case .some(.lasting(let duration)): timeToLive = duration
        case .some(.over): throw MappedKVVaporError.counterExpiryNotPositive(key: key)
        }
        return try entries.increment(key, by: delta, timeToLive: timeToLive)
    }

    /// The same cache, completing its futures on the request's event loop.
    public func `for`(_ request: Request) -> MappedKVVaporCache {
        MappedKVVaporCache(entries: entries, eventLoop: request.eventLoop)
    }
}
