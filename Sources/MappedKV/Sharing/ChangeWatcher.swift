import Glibc
import MappedKVFormat
import MappedKVIO
import Synchronization

/// The thread that notices other processes' changes to one store while anyone subscribes to them.
///
/// Writes through a shared mapping (how MappedKV and MMKV write) raise no inotify event, so the
/// watcher polls: every ``interval`` it compares the meta stamp in the store's shared mapping with
/// the one the store last saw (three loads, no system call), taking the store's lock only if it
/// is free at that moment. When the stamp moved it catches up exactly as a read would (the shared
/// `flock`, then a tail decode or a reload) and delivers the changes. There is no early wake-up:
/// other processes (MMKV among them) would have to signal one, and a 10 ms poll already costs
/// little (docs/bench/store.md, "The change watcher").
///
/// The invariant: a watcher runs only while its store has subscribers. ``SharedStore`` starts one
/// with the first subscription and stops it with the last; a stopped watcher's thread exits
/// within one interval, and ``running`` counts the threads that have not exited yet.
final class ChangeWatcher: Sendable {
    /// How long the watcher sleeps between two looks at the meta stamp.
    static let interval = timespec(tv_sec: 0, tv_nsec: 10_000_000)
    /// The watcher threads in this process that have not exited yet.
    static let running = Atomic<Int>(0)

    private let store: SharedStore
    private let stopped = Atomic<Bool>(false)

    private init(store: SharedStore) { self.store = store }

    /// Starts a watcher thread for `store`; nil (after logging why) if no thread could be created,
    /// in which case changes are still noticed by the store's next access.
    static func start(for store: SharedStore) -> ChangeWatcher? {
        let watcher = ChangeWatcher(store: store)
        running.add(1, ordering: .relaxed)
        store.watcherThreads.add(1, ordering: .relaxed)
        if let error = DetachedThread.start({ watcher.run() }) {
            running.subtract(1, ordering: .relaxed)
            store.watcherThreads.subtract(1, ordering: .relaxed)
            store.logger.error(
                "could not start the change watcher; changes are noticed on the next access",
                metadata: ["error": "\(String(cString: strerror(error)))"])
            return nil
        }
        return watcher
    }

    /// Asks the thread to exit; it does so within one interval (a catch-up under way finishes first).
    func stop() { stopped.store(true, ordering: .releasing) }

    private func run() {
        defer {
            store.watcherThreads.subtract(1, ordering: .relaxed)
            Self.running.subtract(1, ordering: .relaxed)
        }
        var skipped: MetaStamp?
        while !stopped.load(ordering: .acquiring) {
            var pause = Self.interval
            _ = nanosleep(&pause, nil)  // interrupted by a signal: just look early
            guard !stopped.load(ordering: .acquiring) else { return }
            store.pollForChanges(skipping: &skipped)
        }
    }
}
