import Glibc
import MappedKVIO
import Synchronization

/// The thread of a store opened with ``Durability/interval(_:)``: it makes a durability point
/// every interval while anything was written since the last one.
///
/// It holds the store weakly and looks at its stop flag at least every ``slice``, so that a
/// closed store is never kept open by it and its thread ends soon after. A failed flush closes
/// the store (``StoreCore/flushDurably(_:)``), which the next call on it reports; the thread
/// then ends.
final class BackgroundFlusher: Sendable {
    /// The longest the thread sleeps before it looks at its stop flag again.
    static let slice = Duration.milliseconds(20)

    private weak let store: SharedStore?
    private let interval: Duration
    private let stopped = Atomic<Bool>(false)

    private init(store: SharedStore, interval: Duration) {
        self.store = store
        self.interval = max(interval, .milliseconds(1))
    }

    /// Starts the thread; nil (after logging why) if no thread could be created, in which case
    /// only `sync()` and `close()` are durability points.
    static func start(for store: SharedStore, every interval: Duration) -> BackgroundFlusher? {
        let flusher = BackgroundFlusher(store: store, interval: interval)
        if let error = DetachedThread.start({ flusher.run() }) {
            store.logger.error(
                "could not start the background flush; only sync() and close() make writes durable",
                metadata: ["error": "\(String(cString: strerror(error)))"])
            return nil
        }
        return flusher
    }

    /// Asks the thread to end; it does within one ``slice``.
    func stop() { stopped.store(true, ordering: .releasing) }

    private func run() {
        var waited = Duration.zero
        while !stopped.load(ordering: .acquiring) {
            let pause = min(Self.slice, interval - waited)
            var time = timespec(
                tv_sec: Int(pause.components.seconds), tv_nsec: Int(pause.components.attoseconds / 1_000_000_000))
            _ = nanosleep(&time, nil)
            waited += pause
            guard waited >= interval else { continue }
            waited = .zero
            guard !stopped.load(ordering: .acquiring), let store else { return }
            let failed = store.core.withLock { core -> Bool in
                guard core.lifecycle.files != nil, core.hasUnflushedWrites else { return core.lifecycle.files == nil }
                do throws(MappedKVError) {
                    try core.sync()
                    return false
                } catch {
                    store.logger.error(
                        "the background flush failed; the store is closed",
                        metadata: ["id": "\(core.location.id)", "error": "\(error)"])
                    return true
                }
            }
            if failed { return }
        }
    }
}
