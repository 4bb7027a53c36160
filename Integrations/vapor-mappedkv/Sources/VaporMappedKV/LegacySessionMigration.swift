// The upgrade from the first release, which kept sessions as `DiskCache` entries under the key
// prefix `vapor.session/` of the directory: they move into the sessions store with what remained
// of their lifetime, so an upgrade logs no one out.
// Invariants: the move runs inside the sessions store's exclusive section and reads the old
// entries there, so two processes starting at once move each session once; each old entry is
// removed in the same section as its move, so a session deleted in the new store is never brought
// back by a later start; a session already in the new store wins over its old entry; only the
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
        let disk = try DiskCache(
            directory: directory,
            configuration: DiskCacheConfiguration(cryptKey: configuration.cryptKey, trimInterval: nil),
            logger: logger)
        defer { disk.close() }
        // A look without the lock first, so that a start with nothing to move (every start after
        // the first) holds nobody's sessions up.
        guard try !legacyKeys(in: disk).isEmpty else { return 0 }
        let moved = try records.store.withExclusiveLock { transaction in
            var moved = 0
            for oldKey in try legacyKeys(in: disk) {
                let id = SessionID(string: String(oldKey.dropFirst(legacyPrefix.count)))
                let newKey = records.key(id)
                if let entry = try disk.entry(forKey: oldKey), try !transaction.contains(newKey),
                    let json = String(bytes: entry.value, encoding: .utf8),
                    let remaining = remainingLifetime(of: entry, configuration: configuration)
                {
                    try transaction.set(json, forKey: newKey, expiresAfter: remaining)
                    moved += 1
                }
                try disk.removeValue(forKey: oldKey)
            }
            return moved
        }
        logger.notice(
            "moved sessions of the first release into the sessions store", metadata: ["sessions": "\(moved)"])
        return moved
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
