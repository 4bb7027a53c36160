// The upgrade from the first release, which kept sessions as `DiskCache` entries under the key
// prefix `vapor.session/` of the directory: they move into the sessions store with what remained
// of their lifetime, so an upgrade logs no one out.
// Invariants: the move runs inside the sessions store's exclusive section and reads the old
// entries there, so two processes starting at once move each session once; each old entry is
// removed before its move, in the same section, so a session deleted in the new store is never
// brought back by a later start, even after a kill between the two; a session already in the new store wins over its old entry; only the
// default namespace has old entries (the first release had no namespaces).

import Foundation
import Logging
import MappedKV
import MappedKVCache
import Vapor

/// Moves the first release's sessions into the sessions store.
enum LegacySessionMigration {
    /// The key prefix of the first release's sessions in the directory's `DiskCache`.
    static let legacyPrefix = "vapor.session/"

    /// Moves every session the first release left in `directory` into `records` and returns how
    /// many moved. Does nothing when the directory holds no disk cache.
    ///
    /// - Throws: a `CacheError` when the old entries cannot be read or removed, a `MappedKVError`
    ///   when the sessions store fails; what moved before the error stays moved.
    static func run(
        directory: String, into records: SessionRecords, configuration: MappedKVSessionsConfiguration,
        logger: Logger
    ) throws -> Int {
        guard configuration.namespace == nil else { return 0 }
        let manifest = URL(fileURLWithPath: directory).appendingPathComponent("manifest").path
        guard FileManager.default.fileExists(atPath: manifest) else { return 0 }
        let disk = try openLegacyCache(directory: directory, configuration: configuration, logger: logger)
        defer { disk.close() }
        // A look without the lock first, so that a start with nothing to move (every start after
        // the first) holds nobody's sessions up.
        guard try !legacyKeys(in: disk).isEmpty else { return 0 }
        let moved = try records.store.withExclusiveLock { transaction in
            var moved = 0
            for oldKey in try legacyKeys(in: disk) {
                let id = SessionID(string: String(oldKey.dropFirst(legacyPrefix.count)))
                let newKey = records.key(id)
                let entry = try disk.entry(forKey: oldKey)
                // The old entry goes first: a failure or a kill between the two then loses the
                // session (its user signs in again), where the other order could bring a session
                // back after a logout, at the next start.
                try disk.removeValue(forKey: oldKey)
                if let entry, try !transaction.contains(newKey),
                    let json = String(bytes: entry.value, encoding: .utf8),
                    let remaining = remainingLifetime(of: entry, configuration: configuration)
                {
                    try transaction.set(json, forKey: newKey, expiresAfter: remaining)
                    moved += 1
                }
            }
            try disk.sync()  // the removals outlive a power loss
            return moved
        }
        logger.notice(
            "moved sessions of the first release into the sessions store", metadata: ["sessions": "\(moved)"])
        return moved
    }

    /// The directory's disk cache, opened as the application's cache may have it open already:
    /// with the configuration the deprecated providers forwarded (or the sessions' key), and with
    /// the other inter-process lock when this process holds the directory with that one.
    static func openLegacyCache(
        directory: String, configuration: MappedKVSessionsConfiguration, logger: Logger
    ) throws -> DiskCache {
        var cacheConfiguration =
            configuration.legacyCacheConfiguration ?? DiskCacheConfiguration(cryptKey: configuration.cryptKey)
        cacheConfiguration.trimInterval = nil
        do {
            return try DiskCache(directory: directory, configuration: cacheConfiguration, logger: logger)
        } catch let first {
            // Not an error yet: this process may hold the directory with the other lock.
            cacheConfiguration.processLock = cacheConfiguration.processLock == .flock ? .sharedMemory : .flock
            guard let disk = try? DiskCache(directory: directory, configuration: cacheConfiguration, logger: logger)
            else { throw first }
            return disk
        }
    }

    /// The keys of the first release's sessions that have not expired.
    static func legacyKeys(in disk: DiskCache) throws -> [String] {
        var keys: [String] = []
        try disk.forEachEntry { entry in
            if entry.key.hasPrefix(legacyPrefix) { keys.append(entry.key) }
        }
        return keys
    }

    /// What remains of `entry`'s lifetime by the sessions' clock: nil when it is over; the whole
    /// lifetime for an entry without expiry (the first release always set one).
    static func remainingLifetime(
        of entry: DiskCacheEntry, configuration: MappedKVSessionsConfiguration
    ) -> Duration? {
        guard let expiry = entry.expiry else { return configuration.storedLifetime }
        let remaining = Duration.milliseconds(Int64(clamping: expiry)) - configuration.clock.preciseNow()
        return remaining > .zero ? remaining : nil
    }
}
