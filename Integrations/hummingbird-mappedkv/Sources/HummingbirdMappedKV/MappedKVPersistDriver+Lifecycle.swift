// The driver as a service: tidying expired entries away while the app runs, and closing the store
// when the app ends.
//
// Invariants: tidying removes only entries of this driver's namespace that are expired; a failed
// tidy is logged and never stops the app; when `run()` returns (graceful shutdown or cancellation)
// or `shutdown()` is called, the driver's store handle is closed, and every later call on the
// driver throws `MappedKVError.closed`.

import Hummingbird
import Logging
import MappedKV
import ServiceLifecycle

extension MappedKVPersistDriver {
    /// Removes every expired entry of this driver's namespace now, and returns how many it removed.
    ///
    /// ``run()`` calls it every ``Configuration/tidyFrequency``; expired entries are never returned
    /// either way, so this only frees their space.
    @discardableResult
    public func removeExpired() async throws -> Int {
        let prefix = keyPrefix
        let removed = try await store.withExclusiveLock { transaction in
            let now = self.now()
            var expired: [String] = []
            try transaction.forEachEntry { key, payload in
                if Self.isExpired(key: key, payload: payload, prefix: prefix, at: now) { expired.append(key) }
            }
            for key in expired {
                try transaction.removeValue(forKey: key)
            }
            return expired.count
        }
        logger.debug("persist tidy", metadata: ["removed": "\(removed)"])
        return removed
    }

    /// Whether the stored entry `key` with `payload` is one of this driver's (its key starts with
    /// `prefix`) and has expired at `now`. Values other programs put are never expired.
    static func isExpired(key: String, payload: UnsafeRawBufferPointer, prefix: String, at now: Int64) -> Bool {
        guard prefix.isEmpty || key.hasPrefix(prefix), let bytes = StoredBytes.value(ofPayload: payload),
            let envelope = PersistEnvelope.parse(bytes)
        else { return false }
        return !envelope.isAlive(at: now)
    }

    /// Tidies expired entries away every ``Configuration/tidyFrequency`` until the service group
    /// shuts down gracefully or the task is cancelled, then closes the store and returns.
    ///
    /// A failed tidy is logged and tried again at the next interval: it never stops the app.
    /// Hummingbird's `Application` shuts its services down in the reverse of their order, after
    /// its HTTP server, so requests in flight finish before the store closes.
    public func run() async throws {
        let period = configuration.tidyFrequency
        await cancelWhenGracefulShutdown {
            while !Task.isCancelled {
                do {
                    try await Task.sleep(for: period)
                } catch {
                    return
                }
                do {
                    try await self.removeExpired()
                } catch is CancellationError {
                    return
                } catch {
                    self.logger.warning("persist tidy failed", metadata: ["error": "\(error)"])
                }
            }
        }
        try await shutdown()
    }

    /// Closes the driver's store handle: every later call on the driver throws
    /// ``MappedKVError/closed(_:)``. Other drivers and processes on the same directory are not
    /// affected. Calling it again does nothing.
    public func shutdown() async throws {
        store.close()
        logger.debug("persist store closed", metadata: ["store": "\(configuration.storeID)"])
    }
}
