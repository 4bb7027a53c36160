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

    /// The prefix of the cache's keys in the directory, keeping them apart from the sessions'.
    static let keyPrefix = "vapor.cache/"

    /// A cache over `disk`, completing its futures on `eventLoop`.
    ///
    /// - Parameters:
    ///   - disk: the directory, opened by the caller, who also closes it.
    ///   - eventLoop: the loop of the returned futures.
    public init(disk: DiskCache, eventLoop: any EventLoop) {
        self.init(entries: JSONEntries(disk: .success(disk), prefix: Self.keyPrefix), eventLoop: eventLoop)
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

    /// The same cache, completing its futures on the request's event loop.
    public func `for`(_ request: Request) -> MappedKVVaporCache {
        MappedKVVaporCache(entries: entries, eventLoop: request.eventLoop)
    }
}
