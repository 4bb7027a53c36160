// Codable values as JSON entries of one namespace (a key prefix) of a `DiskCache` directory: the one
// place where Vapor's values meet the directory's bytes, shared by the cache and the sessions driver.
// Invariants: every key this type writes starts with its prefix, so the cache and the sessions of
// one directory never see each other's entries; and a value that fails to decode or encode is
// reported as a `MappedKVVaporError` and leaves the directory unchanged.

import Foundation
import MappedKVCache

/// JSON values under one key prefix of a shared disk cache directory.
struct JSONEntries: Sendable {
    /// The directory, or why it could not be opened (then every call throws that error).
    let disk: Result<DiskCache, MappedKVVaporError>
    /// Put before every key, to keep namespaces apart in one directory.
    let prefix: String

    /// The value under `key` decoded as `type`, or nil when absent or expired.
    ///
    /// - Throws: ``MappedKVVaporError/valueDoesNotDecode(key:type:reason:)`` when the stored JSON is
    ///   not a `type`; the core's `CacheError` when the directory fails.
    func value<Value: Decodable>(forKey key: String, as type: Value.Type) throws -> Value? {
        let disk = try disk.get()
        guard let bytes = try disk.value(forKey: prefix + key) else { return nil }
        do {
            return try JSONDecoder().decode(type, from: Data(bytes))
        } catch {
            throw MappedKVVaporError.valueDoesNotDecode(
                key: key, type: String(reflecting: type), reason: String(describing: error))
        }
    }

    /// Stores `value` as JSON under `key`, replacing any value; it is a miss after `timeToLive`
    /// (nil: the directory's default time to live, which is none unless configured).
    func set<Value: Encodable>(_ value: Value, forKey key: String, timeToLive: Duration?) throws {
        let disk = try disk.get()
        let encoded: Data
        do {
            encoded = try JSONEncoder().encode(value)
        } catch {
            throw MappedKVVaporError.valueDoesNotEncode(
                key: key, type: String(reflecting: Value.self), reason: String(describing: error))
        }
        try disk.set([UInt8](encoded), forKey: prefix + key, timeToLive: timeToLive)
    }

    /// Adds `delta` to the counter under `key` (a missing one starts at zero, expiring after
    /// `timeToLive` when given) and returns its new value, atomically across processes.
    ///
    /// - Throws: ``MappedKVVaporError/notACounter(key:)`` when the value is not a counter,
    ///   ``MappedKVVaporError/counterOverflow(key:)`` past the range of `Int`, and the core's
    ///   `CacheError` when the directory fails.
    func increment(_ key: String, by delta: Int, timeToLive: Duration?) throws -> Int {
        let disk = try disk.get()
        do {
            return Int(try disk.increment(prefix + key, by: Int64(delta), expiresAfter: timeToLive))
        } catch .notACounter {
            throw MappedKVVaporError.notACounter(key: key)
        } catch .counterOverflow {
            throw MappedKVVaporError.counterOverflow(key: key)
        }
    }

    /// Removes the value under `key`; nothing happens when there is none.
    func removeValue(forKey key: String) throws {
        try disk.get().removeValue(forKey: prefix + key)
    }
}
