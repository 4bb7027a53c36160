// The driver as a service: tidying expired entries away while the app runs, and closing the store
// when the app ends.
//
// Invariants: tidying removes only entries of this driver's namespace that are expired, in steps
// of one exclusive section over about `tidyStepKeys` keys each, pausing between steps so no
// request of this process or any other waits for a whole scan; `run()` tidies only when this
// process gets the store's tidying turn for its namespace, so one process tidies at a time, about
// once per `tidyFrequency` whatever the number of processes, and every turn taken is ended; a
// failed tidy is logged and never stops the app; when `run()` returns (graceful shutdown or
// cancellation) or `shutdown()` is called, the driver's store handle is closed, and every later
// call on the driver throws `MappedKVError.closed`.

import Hummingbird
import Logging
import MappedKV
import ServiceLifecycle

extension MappedKVPersistDriver {
    /// About how many keys one tidying step looks at, in one exclusive section.
    static let tidyStepKeys = 2048
    /// How long a tidying turn stays this process's if it never ends it (it was killed): longer
    /// than a tidy of a large store takes, short beside the tidying interval.
    static let tidyLease = Duration.seconds(120)
    /// How long tidying waits between steps, so that processes waiting for the lock get it.
    static let tidyPause = Duration.milliseconds(1)

    /// The name of the store's tidying turn for this driver's namespace: namespaces tidy apart.
    var tidyTurnName: String { "hummingbird-persist.tidy." + (configuration.namespace ?? "") }

    /// Removes every expired entry of this driver's namespace now, and returns how many it removed.
    ///
    /// It goes through the store in steps: each is one exclusive section over about 2,048 keys,
    /// and the task pauses for a millisecond between steps, so requests of this process and of others run in
    /// between instead of waiting for a whole scan. ``run()`` calls it when this process gets the
    /// tidying turn; expired entries are never returned either way, so this only frees their space.
    ///
    /// - Throws: `CancellationError` if the task is cancelled between steps (the entries removed
    ///   so far stay removed); ``MappedKVError`` if the store fails or the driver was shut down.
    @discardableResult
    public func removeExpired() async throws -> Int {
        try await removeExpired(keysPerStep: Self.tidyStepKeys).removed
    }

    /// ``removeExpired()`` in steps of about `keysPerStep` keys; also returns the steps it took.
    func removeExpired(keysPerStep: Int) async throws -> (removed: Int, steps: Int) {
        let prefix = keyPrefix
        var cursor: SweepCursor? = .start
        var removed = 0
        var steps = 0
        while let from = cursor {
            try Task.checkCancellation()
            let now = self.now()
            let step = try store.sweepStep(from: from, keyLimit: keysPerStep) { key, payload in
                Self.isExpired(key: key, payload: payload, prefix: prefix, at: now)
            }
            removed += step.removed
            steps += 1
            cursor = step.next
            // A pause, not a yield: the lock is not fair, so a step taken at once after the last
            // can keep a waiting process out for the whole tidy.
            if cursor != nil { try await Task.sleep(for: Self.tidyPause) }
        }
        logger.debug("persist tidy", metadata: ["removed": "\(removed)", "steps": "\(steps)"])
        return (removed, steps)
    }

    /// Whether the stored entry `key` with `payload` is one of this driver's (its key starts with
    /// `prefix`) and has expired at `now`. Values other programs put are never expired.
    static func isExpired(key: String, payload: UnsafeRawBufferPointer, prefix: String, at now: Int64) -> Bool {
        // Bytes, not characters: hasPrefix compares canonical equivalents and misses a prefix
        // that a combining mark follows.
        guard prefix.isEmpty || key.utf8.starts(with: prefix.utf8), let bytes = StoredBytes.value(ofPayload: payload),
            let envelope = PersistEnvelope.parse(bytes)
        else { return false }
        return !envelope.isAlive(at: now)
    }

    /// Tidies if this process gets the tidying turn (`force`: however recently the last turn
    /// ended, though never while another process holds it), and ends the turn after. Returns the
    /// entries removed, or nil when the turn went elsewhere.
    func tidyIfOurTurn(force: Bool) async throws -> Int? {
        let name = tidyTurnName
        guard
            try store.beginTurn(
                name, minimumInterval: configuration.tidyFrequency, lease: Self.tidyLease, force: force)
        else {
            logger.trace("persist tidy: another process has the turn")
            return nil
        }
        do {
            let removed = try await removeExpired()
            try store.endTurn(name)
            return removed
        } catch {
            try? store.endTurn(name)
            throw error
        }
    }

    /// Tidies expired entries away once at start and then every ``Configuration/tidyFrequency``,
    /// each time only if this process gets the store's tidying turn, until the service group shuts
    /// down gracefully or the task is cancelled; then closes the store and returns.
    ///
    /// With several processes on the store, one tidies at a time, and the store is tidied about
    /// once per interval rather than once per process. A failed tidy is logged and tried again at
    /// the next interval: it never stops the app. Hummingbird's `Application` shuts its services
    /// down in the reverse of their order, after its HTTP server, so requests in flight finish
    /// before the store closes.
    public func run() async throws {
        // Clamped: a zero interval would spin on the turn, and Task.sleep traps past about 292 years.
        let period = min(max(configuration.tidyFrequency, .milliseconds(1)), .seconds(86_400 * 365))
        await cancelWhenGracefulShutdown {
            var force = true  // at start, whenever the last turn was
            while !Task.isCancelled {
                do {
                    _ = try await self.tidyIfOurTurn(force: force)
                } catch is CancellationError {
                    return
                } catch {
                    self.logger.warning("persist tidy failed", metadata: ["error": "\(error)"])
                }
                force = false
                do {
                    try await Task.sleep(for: period)
                } catch {
                    return
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
