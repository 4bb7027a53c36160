import Logging
import MappedKVIO
import Synchronization

/// The one instance of a store's files in this process, shared by every ``MappedKV`` handle that
/// opened them.
///
/// `flock` and OFD locks belong to an open file description, so two independent opens in one
/// process would block each other (or defeat the mode lock); every open of the same files
/// therefore shares one `SharedStore`, found by the data file's device and inode.
final class SharedStore: Sendable {
    /// The data file's identity.
    let identity: FileIdentity
    /// The store, serialized by a mutex.
    let core: Mutex<StoreCore>
    /// Raised when another process's change is waiting to be reported.
    let signal: ChangeSignal
    /// Who wants to hear of other processes' changes.
    let observers = Mutex<ObserverList>(ObserverList())
    /// The mode and access it was opened with.
    let isMultiProcess: Bool
    let isReadOnly: Bool

    init(core: sending StoreCore, identity: FileIdentity, signal: ChangeSignal) {
        self.identity = identity
        self.isMultiProcess = core.isMultiProcess
        self.isReadOnly = core.configuration.isReadOnly
        self.signal = signal
        self.core = Mutex(core)
    }

    /// Hands the changes noticed so far to every observer, outside the store's lock.
    func deliverChanges() {
        let changes = core.withLock { core in core.takePendingChanges() }
        guard !changes.isEmpty else { return }
        let handlers = observers.withLock { $0.handlers }
        for change in changes {
            for handler in handlers { handler(change) }
        }
    }

    /// Registered change handlers.
    struct ObserverList: Sendable {
        private var next: UInt64 = 0
        private var byToken: [UInt64: @Sendable (ExternalChange) -> Void] = [:]

        var handlers: [@Sendable (ExternalChange) -> Void] { byToken.sorted { $0.key < $1.key }.map(\.value) }

        mutating func add(_ handler: @escaping @Sendable (ExternalChange) -> Void) -> UInt64 {
            next += 1
            byToken[next] = handler
            return next
        }

        mutating func remove(_ token: UInt64) { byToken[token] = nil }
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
        if last { store.core.withLock { core in core.close() } }
    }
}
