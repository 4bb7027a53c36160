import Glibc
import Logging
import MappedKVFormat
import MappedKVIO
import Synchronization

/// The one instance of a store's files in this process, shared by every ``MappedKV`` handle that
/// opened them.
///
/// `flock` and OFD locks belong to an open file description, so two independent opens in one
/// process would block each other (or defeat the mode lock); every open of the same files
/// therefore shares one `SharedStore`, found by the data file's device and inode.
///
/// It also keeps the store's change subscriptions: a ``ChangeWatcher`` runs exactly while a
/// multi-process store has at least one, and changes reach subscribers one at a time, in order.
final class SharedStore: Sendable {
    /// The data file's identity.
    let identity: FileIdentity
    /// The store, serialized by a mutex.
    let core: Mutex<StoreCore>
    /// Raised when another process's change is waiting to be reported.
    let signal: ChangeSignal
    /// The stamp the store last caught up to, for the check without the mutex.
    let observedStamp: ObservedStamp
    /// Who wants to hear of other processes' changes, and the watcher that runs while anyone does.
    private let subscriptions = Mutex<Subscriptions>(Subscriptions())
    /// The watcher threads of this store that are running (a stopped one until its thread exits).
    let watcherThreads = Atomic<Int>(0)
    /// The store's logger.
    let logger: Logger
    /// The exclusive section a thread may hold on the store (Sharing/ExclusiveSection.swift).
    let section = ExclusiveSection()
    /// The transaction of an ended section that nothing else kept, for the next section to reuse
    /// instead of allocating one: API/'s `Transaction`, held as an object so that this layer names
    /// nothing above it; only API/ stores and takes it. Unchecked: only the thread holding the
    /// section reads or writes it, and the section's gate orders one holder's accesses before the
    /// next one's.
    nonisolated(unsafe) var spareTransaction: AnyObject?
    /// The mode and access it was opened with.
    let isMultiProcess: Bool
    let isReadOnly: Bool
    /// The thread that makes durability points at an interval (``Durability/interval(_:)``).
    fileprivate let flusher = Mutex<BackgroundFlusher?>(nil)

    private struct Subscriptions: Sendable {
        var subscribers = ChangeSubscribers()
        var watcher: ChangeWatcher?
    }

    init(core: sending StoreCore, identity: FileIdentity, signal: ChangeSignal) {
        self.identity = identity
        self.isMultiProcess = core.isMultiProcess
        self.isReadOnly = core.configuration.isReadOnly
        self.logger = core.logger
        self.signal = signal
        self.observedStamp = core.observedStamp
        self.core = Mutex(core)
    }

    // MARK: Subscriptions

    /// Adds a subscriber; the first one of a multi-process store starts the watcher. Returns the
    /// token that ends it.
    func subscribe(
        owner: ObjectIdentifier, deliver: @escaping @Sendable (ExternalChange) -> Void,
        end: (@Sendable () -> Void)?
    ) -> UInt64 {
        subscriptions.withLock { subscriptions in
            let subscriber = ChangeSubscribers.Subscriber(
                owner: owner, deliver: deliver, end: end, isActive: ChangeSubscribers.ActiveFlag())
            let token = subscriptions.subscribers.add(subscriber)
            signal.isObserved.store(true, ordering: .relaxed)
            if isMultiProcess, subscriptions.watcher == nil { subscriptions.watcher = ChangeWatcher.start(for: self) }
            return token
        }
    }

    /// Ends the subscription with `token`; ending it twice is harmless.
    func unsubscribe(_ token: UInt64) {
        let ended = subscriptions.withLock { subscriptions -> ChangeSubscribers.Subscriber? in
            defer { stopWatcherIfUnobserved(&subscriptions) }
            return subscriptions.subscribers.remove(token)
        }
        ended?.end?()
    }

    /// Ends every subscription made through the handle `owner` (which is closing).
    func endSubscriptions(ownedBy owner: ObjectIdentifier) {
        let ended = subscriptions.withLock { subscriptions -> [ChangeSubscribers.Subscriber] in
            defer { stopWatcherIfUnobserved(&subscriptions) }
            return subscriptions.subscribers.removeAll(ownedBy: owner)
        }
        for subscriber in ended { subscriber.end?() }
    }

    private func stopWatcherIfUnobserved(_ subscriptions: inout Subscriptions) {
        guard subscriptions.subscribers.isEmpty else { return }
        signal.isObserved.store(false, ordering: .relaxed)
        subscriptions.watcher?.stop()
        subscriptions.watcher = nil
    }

    // MARK: Noticing and delivering changes

    /// The watcher's look at the store: if the meta stamp moved and the store's lock is free,
    /// catches up as a read would, then delivers. A stamp whose catch-up failed is `skipped` until
    /// the stamp moves again (the store's next access reports the failure to its caller).
    func pollForChanges(skipping skipped: inout MetaStamp?) {
        var failed = skipped
        _ = core.withLockIfAvailable { core in
            guard let files = core.lifecycle.files else { return }
            let stamp = files.metaStamp()
            guard stamp != core.observed, stamp != failed else { return }
            do throws(MappedKVError) {
                try core.prepareRead()
                failed = nil
            } catch {
                failed = stamp
                logger.warning(
                    "catching up with another process's change failed",
                    metadata: ["id": "\(core.location.id)", "error": "\(error)"])
            }
        }
        skipped = failed
        if signal.pending.load(ordering: .sequentiallyConsistent) { deliverChanges() }
    }

    /// Hands the changes noticed so far to every subscriber, outside the store's lock.
    ///
    /// One thread delivers at a time, so subscribers see changes in the order they were noticed
    /// and a handler is never called concurrently with itself. A thread that finds another one
    /// delivering leaves its changes to that one (which is what makes a handler that calls the
    /// store safe: its own call returns at once).
    func deliverChanges() {
        while signal.delivering.compareExchange(expected: false, desired: true, ordering: .sequentiallyConsistent)
            .exchanged
        {
            while true {
                let changes = core.withLock { core in core.takePendingChanges() }
                guard !changes.isEmpty else { break }
                let subscribers = subscriptions.withLock { $0.subscribers.inOrder }
                for change in changes {
                    for subscriber in subscribers where subscriber.isActive.isActive { subscriber.deliver(change) }
                }
            }
            signal.delivering.store(false, ordering: .sequentiallyConsistent)
            // A change noticed after the last take, while this thread was still delivering.
            guard signal.pending.load(ordering: .sequentiallyConsistent) else { return }
        }
    }

    /// Catches up with other processes' changes, then hands every change noticed so far to the
    /// subscribers, waiting for a delivery in progress on another thread: what
    /// ``MappedKV/synchronizeChangesIfMoved()`` does once its check without the mutex finds the
    /// stamp moved or changes pending. While another thread of this process holds an exclusive
    /// section, no other process can write: the section caught up when it began, so this only
    /// delivers what is pending.
    func catchUpAndDeliver() throws(MappedKVError) {
        try core.withLock { (core) throws(MappedKVError) in
            guard section.admitsCurrentThread() else { return }
            try core.prepareRead()
        }
        if signal.pending.load(ordering: .sequentiallyConsistent)
            || signal.delivering.load(ordering: .sequentiallyConsistent)
        {
            deliverChangesWaiting()
        }
    }

    /// ``deliverChanges()``, then waits for a delivery running on another thread to finish, until
    /// nothing is pending: every change noticed before the call has reached the subscribers.
    func deliverChangesWaiting() {
        repeat {
            deliverChanges()
            while signal.delivering.load(ordering: .sequentiallyConsistent) { sched_yield() }
        } while signal.pending.load(ordering: .sequentiallyConsistent)
    }
}

/// The shared instances open in this process, with how many handles use each.
enum StoreRegistry {
    private struct Entry {
        var store: SharedStore
        var handles: Int
    }

    private static let entries = Mutex<[FileIdentity: Entry]>([:])

    /// The shared instance for `location`, opened if no handle has it open.
    ///
    /// An instance already open must have been opened in the same mode, with the same access and
    /// key; anything else throws ``MappedKVError/modeConflict(id:reason:)``.
    static func open(
        _ location: StoreLocation, configuration: Configuration, logger: Logger
    ) throws(MappedKVError) -> SharedStore {
        try entries.withLock { (entries) throws(MappedKVError) -> SharedStore in
            if let identity = FileIdentity(path: location.dataPath), var entry = entries[identity],
                entry.store.core.withLock({ core in core.isShareable })
            {
                let store = entry.store
                if store.isMultiProcess != configuration.isMultiProcess || store.isReadOnly != configuration.isReadOnly
                {
                    throw .modeConflict(
                        id: location.id,
                        reason: "this process already has it open "
                            + (store.isMultiProcess ? "in multi-process mode" : "in single-process mode")
                            + (store.isReadOnly ? ", read-only" : ", read-write"))
                }
                let sameLock = store.core.withLock { core in
                    !core.isMultiProcess || core.configuration.processLock == configuration.processLock
                }
                guard sameLock else {
                    throw .modeConflict(
                        id: location.id,
                        reason: "this process already has it open with the other processLock ("
                            + (configuration.processLock == .flock ? ".sharedMemory" : ".flock") + ")")
                }
                let sameKey = store.core.withLock { core in core.cryptKey == configuration.cryptKey }
                guard sameKey else {
                    throw .modeConflict(
                        id: location.id, reason: "this process already has it open with a different encryption key")
                }
                entry.handles += 1
                entries[identity] = entry
                return store
            }
            let signal = ChangeSignal()
            let core = try StoreCore(location: location, configuration: configuration, logger: logger, signal: signal)
            guard let identity = core.fileIdentity else { throw .closed("the store was closed while opening") }
            let store = SharedStore(core: core, identity: identity, signal: signal)
            if case .interval(let interval) = configuration.durability, !configuration.isReadOnly {
                let started = BackgroundFlusher.start(for: store, every: interval)
                store.flusher.withLock { $0 = started }
            }
            entries[identity] = Entry(store: store, handles: 1)
            return store
        }
    }

    /// Runs `body` while no store can be opened or closed in this process, with this process's
    /// instance of `location`'s files, or nil if no handle has them open.
    ///
    /// Storage-level operations (remove, backup, restore) use it so that what they found open,
    /// or not, stays true until they finish. `body` must not open or close a store.
    static func withInstance<R>(
        of location: StoreLocation, _ body: (SharedStore?) throws(MappedKVError) -> R
    ) throws(MappedKVError) -> R {
        try entries.withLock { (entries) throws(MappedKVError) -> R in
            guard let identity = FileIdentity(path: location.dataPath), let entry = entries[identity],
                entry.store.core.withLock({ core in core.isShareable })
            else { return try body(nil) }
            return try body(entry.store)
        }
    }

    /// Gives back one handle; the last one closes the files.
    static func release(_ store: SharedStore) {
        let last = entries.withLock { entries -> Bool in
            guard var entry = entries[store.identity], entry.store === store else { return true }
            entry.handles -= 1
            if entry.handles > 0 {
                entries[store.identity] = entry
                return false
            }
            entries[store.identity] = nil
            return true
        }
        guard last else { return }
        store.flusher.withLock { flusher in
            flusher?.stop()
            flusher = nil
        }
        // The spare transaction holds the store: dropping it breaks the cycle, so the store (and
        // its stamp mapping) goes with its last handle. No section runs once no handle is left.
        store.spareTransaction = nil
        store.core.withLock { core in core.close() }
    }
}
