// Removing expired sessions from the sessions store: once when the application boots and then
// every interval, in bounded steps with a pause between them, by one process of those sharing the
// directory at a time. Invariants: a tidy removes only keys whose expiry has passed (the store's
// `removeExpiredKeysStep`), so it never ends a live session; the turn taken with `beginTurn` is
// ended by the process that took it, or lapses after its lease if that process dies; shutdown
// cancels the task and waits for it before the store closes.

import Dispatch
import Logging
import MappedKV
import Synchronization
import Vapor

/// The tidy of one application's sessions store, started at boot and stopped at shutdown.
final class SessionTidy: LifecycleHandler, Sendable {
    /// The name of the cross-process turn, shared by every process that opens the store.
    static let turnName = "vapor-sessions.tidy"
    /// How long a turn stays taken when its process dies before ending it.
    static let lease: Duration = .seconds(10 * 60)

    /// The sessions store.
    let store: MappedKV
    /// How often a tidy runs after the one at boot; nil: at boot only.
    let interval: Duration?
    /// The most keys a step looks at.
    let stepKeys: Int
    /// Where the tidy reports.
    let logger: Logger
    /// The running task, from boot to shutdown.
    private let task = Mutex<Task<Void, Never>?>(nil)

    /// A tidy of `store`, every `interval` after boot, `stepKeys` keys a step, reporting to `logger`.
    init(store: MappedKV, interval: Duration?, stepKeys: Int, logger: Logger) {
        self.store = store
        self.interval = interval
        self.stepKeys = max(1, stepKeys)
        self.logger = logger
    }

    func didBoot(_ application: Application) throws { start() }

    func didBootAsync(_ application: Application) async throws { start() }

    func shutdown(_ application: Application) {
        guard let running = task.withLock({ $0.take() }) else { return }
        running.cancel()
        // The stores close after this returns: wait for the step in flight (a few milliseconds)
        // and the end of the turn, so neither runs on a closing store.
        let finished = DispatchSemaphore(value: 0)
        Task.detached {
            await running.value
            finished.signal()
        }
        finished.wait()
    }

    func shutdownAsync(_ application: Application) async {
        let running = task.withLock { $0.take() }
        running?.cancel()
        await running?.value
    }

    /// Starts the task unless it runs already: a forced tidy now, then one every interval.
    private func start() {
        task.withLock { task in
            guard task == nil else { return }
            task = Task.detached { [self] in
                _ = await tidy(force: true)
                guard let interval else { return }
                while !Task.isCancelled {
                    do { try await Task.sleep(for: interval) } catch { return }
                    _ = await tidy(force: false)
                }
            }
        }
    }

    /// Removes the expired sessions if this process gets the turn (always asked for when `force`,
    /// otherwise when no process tidied within the interval); returns how many it removed, or nil
    /// when another process has the turn or the store failed.
    @discardableResult
    func tidy(force: Bool) async -> Int? {
        do {
            let minimum = interval ?? .zero
            guard try store.beginTurn(Self.turnName, minimumInterval: minimum, lease: Self.lease, force: force) else {
                return nil
            }
            defer { try? store.endTurn(Self.turnName) }
            var cursor = SweepCursor.start
            var removed = 0
            while !Task.isCancelled {
                let step = try store.removeExpiredKeysStep(from: cursor, keyLimit: stepKeys)
                removed += step.removed
                guard let next = step.next else { break }
                cursor = next
                // A pause, not a yield: the lock is not fair, so a step taken at once after the
                // last can keep a waiting process out for the whole tidy.
                try await Task.sleep(for: .milliseconds(1))
            }
            logger.debug("removed expired sessions", metadata: ["sessions": "\(removed)"])
            return removed
        } catch is CancellationError {
            return nil  // the application is shutting down
        } catch MappedKVError.closed {
            return nil  // the application shut down during the tidy
        } catch {
            logger.warning("could not remove expired sessions", metadata: ["error": "\(error)"])
            return nil
        }
    }
}
