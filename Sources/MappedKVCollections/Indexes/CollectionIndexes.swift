import Foundation
import MappedKV
import Synchronization

// The indexes of one collection store in this process, shared by every handle on it, and kept in
// step with the store. The invariants:
// - every change to the indexes happens inside the store's exclusive section, so index updates are
//   applied in the order the store's writes were made, by any thread of any process;
// - after `synchronize()`, every write made before the call (by this process or another) is in the
//   indexes: other processes' writes arrive as external changes, recorded as dirty keys by the
//   handler (which never calls the store) and applied from the store's current bytes.

/// Index state under the mutex.
struct IndexState {
    /// The index sets by bucket name (byte-exact, as the store tells buckets apart).
    var buckets: [ExactString: BucketIndexSet] = [:] { didSet { bucketsVersion &+= 1 } }
    /// Counts the changes to `buckets`: an ``IndexSetMemo`` filled at this count still holds the
    /// set its bucket has.
    private(set) var bucketsVersion: UInt64 = 0
    /// Store keys other processes changed that are not applied yet (byte-exact).
    var dirty: Set<ExactString> = []
    /// Another process changed the store in a way that names no keys (compaction, clear, reload).
    var needsRebuild = false
    /// Counts every change applied or noticed: a query that saw the same count before and after
    /// reading its entries read one state.
    var changes: UInt64 = 0
}

extension IndexState {
    /// Drops the index `name` of `bucket`, and the bucket's set if it has no index left and its
    /// keys are not ordered (its entries then need no IDs).
    mutating func removeIndex(_ name: String, of bucket: String) {
        guard let set = buckets[ExactString(bucket)] else { return }
        set.removeIndex(name)
        if set.indexes.isEmpty && set.keyOrder == nil {
            buckets[ExactString(bucket)] = nil
        } else {
            // A new version: memos of the set refill their arrays of index values.
            buckets[ExactString(bucket)] = set
        }
        changes &+= 1
    }

    /// The index set of the bucket `name` (nil if it has none), from `memo` when `buckets` has
    /// not changed since `memo` was filled, else looked up and remembered there.
    func indexSet(of name: String, memo: inout IndexSetMemo) -> BucketIndexSet? {
        if memo.version == bucketsVersion { return memo.set }
        let set = buckets[ExactString(name)]
        memo.version = bucketsVersion
        memo.set = set
        return set
    }
}

/// What a bucket handle remembers of its bucket's index set, so that a put does not look it up
/// by name: valid while ``IndexState/bucketsVersion`` is the count it was filled at. Used only
/// under the mutex of ``CollectionIndexes/state``.
struct IndexSetMemo {
    /// The ``IndexState/bucketsVersion`` the memo was filled at (none can be `.max`).
    var version: UInt64 = .max
    /// The bucket's index set then.
    var set: BucketIndexSet?
    /// An array each put of the handle fills with its index values and hands back, so that a put
    /// allocates none.
    var values: [IndexValue?] = []
}

/// The indexes of one collection store in this process.
final class CollectionIndexes: Sendable {
    let store: MappedKV
    let state: Mutex<IndexState>
    /// The bucket change streams open on the store in this process (Changes/ChangeFeeds.swift).
    let changeFeeds = ChangeFeeds()
    private let observation: Mutex<ExternalChangeObservation?>

    private init(store: MappedKV) {
        self.store = store
        self.state = Mutex(IndexState())
        self.observation = Mutex(nil)
    }

    deinit { observation.withLock { $0?.cancel() } }

    private final class WeakIndexes: @unchecked Sendable {
        weak var value: CollectionIndexes?
        init(_ value: CollectionIndexes) { self.value = value }
    }

    private static let registry = Mutex<[String: WeakIndexes]>([:])

    /// The process's indexes of the store `store` is a handle of, built if no handle has them.
    static func shared(for store: MappedKV) throws(CollectionError) -> CollectionIndexes {
        let path = store.location.dataPath
        if let existing = registry.withLock({ $0[path]?.value }) { return existing }
        let handle: MappedKV
        do {
            handle = try MappedKV(
                id: store.location.id, directory: store.location.directory, configuration: store.configuration)
        } catch {
            throw .store(error)
        }
        let indexes = CollectionIndexes(store: handle)
        try indexes.start()
        return registry.withLock { registry in
            if let existing = registry[path]?.value { return existing }
            registry[path] = WeakIndexes(indexes)
            return indexes
        }
    }

    /// Subscribes to other processes' changes, then builds every stored index.
    private func start() throws(CollectionError) {
        let token = store.observeExternalChanges { [weak self] change in
            self?.state.withLock { state in
                if let keys = change.changedKeys {
                    for key in keys where key.utf8.first == 2 || key.utf8.first == CollectionKey.definitionPrefix {
                        state.dirty.insert(ExactString(key))
                    }
                } else {
                    state.needsRebuild = true
                }
                state.changes &+= 1
            }
        }
        observation.withLock { $0 = token }
        try inSection { transaction throws(CollectionError) in try rebuild(transaction) }
    }

    // MARK: Sections

    /// Runs `body` inside the store's exclusive section, after applying what other processes changed.
    func inSection<R>(_ body: (MappedKV.Transaction) throws(CollectionError) -> R) throws(CollectionError) -> R {
        let result: Result<R, CollectionError>
        do {
            result = try store.withExclusiveLock { transaction in
                do throws(CollectionError) {
                    try applyPending(transaction)
                    return .success(try body(transaction))
                } catch {
                    return .failure(error)
                }
            }
        } catch let error as MappedKVError {
            throw .store(error)
        } catch {
            throw .store(.invalidArgument("\(error)"))
        }
        return try result.get()
    }

    /// Brings the indexes up to date with every write made before the call.
    func synchronize() throws(CollectionError) {
        // Only other processes make changes this process must catch up with, and a store opened
        // for one process has none (its checks would find nothing, at the cost of a lock).
        guard store.isMultiProcess else { return }
        do { try store.synchronizeChanges() } catch { throw .store(error) }
        guard state.withLock({ !$0.dirty.isEmpty || $0.needsRebuild }) else { return }
        try inSection { _ throws(CollectionError) in }
    }

    /// Applies other processes' changes (inside the section, so nothing changes meanwhile).
    private func applyPending(_ transaction: MappedKV.Transaction) throws(CollectionError) {
        guard store.isMultiProcess else { return }  // as in `synchronize()`
        while true {
            do { try store.synchronizeChanges() } catch { throw .store(error) }
            let (dirty, rebuildAll) = state.withLock { state in
                defer {
                    state.dirty = []
                    state.needsRebuild = false
                }
                return (state.dirty, state.needsRebuild)
            }
            if rebuildAll {
                try rebuild(transaction)
                continue
            }
            guard !dirty.isEmpty else { return }
            for storeKey in dirty.map(\.string) {
                let payload: [UInt8]?
                do { payload = try transaction.payload(forKey: storeKey) } catch { throw .store(error) }
                try applyStored(storeKey, payload: payload, transaction)
            }
        }
    }

    /// Applies the current bytes of one changed key: an entry, or an index definition.
    private func applyStored(
        _ storeKey: String, payload: [UInt8]?, _ transaction: MappedKV.Transaction
    ) throws(CollectionError) {
        if let (bucket, key) = CollectionKey.decode(storeKey) {
            let record = payload.flatMap { bytes in try? bytes.withUnsafeBytes { try EntryRecord(decoding: $0) } }
            state.withLock { state in
                state.buckets[ExactString(bucket)]?.apply(record, key: key)
                state.changes &+= 1
            }
        } else if let (bucket, name) = CollectionKey.decodeDefinition(storeKey) {
            guard let payload else {
                // Another process removed the definition: the index is no longer maintained (a
                // closure index of this process by that name is this process's own).
                state.withLock { state in
                    if state.buckets[ExactString(bucket)]?.closures[name] == nil { state.removeIndex(name, of: bucket) }
                }
                return
            }
            guard let definition = try? JSONDecoder().decode(IndexDefinition.self, from: Data(payload)) else { return }
            let entries = try Self.entries(of: bucket, transaction)
            state.withLock { state in
                let set = state.buckets[ExactString(bucket)] ?? BucketIndexSet(bucket: bucket)
                if set.indexes[definition.name]?.definition != definition {
                    _ = set.add(definition, closure: nil, entries: entries)
                }
                state.buckets[ExactString(bucket)] = set
                state.changes &+= 1
            }
        }
    }

    // MARK: Building

    /// Rebuilds every stored index from the store, keeping this process's closure indexes.
    private func rebuild(_ transaction: MappedKV.Transaction) throws(CollectionError) {
        var definitions: [ExactString: [IndexDefinition]] = [:]
        do {
            try transaction.forEachRawEntryInPlace { key, payload in
                guard key.first == CollectionKey.definitionPrefix,
                    let (bucket, _) = CollectionKey.decodeDefinition(String(decoding: key, as: UTF8.self)),
                    let definition = try? JSONDecoder().decode(IndexDefinition.self, from: Data(payload))
                else { return }
                definitions[ExactString(bucket), default: []].append(definition)
            }
        } catch {
            throw .store(error)
        }
        let (closures, keyOrdered) = state.withLock { state in
            (
                state.buckets.mapValues { set in set.closures.values.map { $0 } },
                Set(state.buckets.filter { $0.value.keyOrder != nil }.keys)
            )
        }
        // One pass over the entries: each entry of an indexed bucket gets its ID (its position in
        // `keys`) and its value for every stored index, read from the record in place; closure
        // indexes need the decoded record. The tables and indexes are made at the end, each in one go.
        // The walks read the store in place under its lock: nothing in them calls the store.
        let order = Array(Set(definitions.keys).union(closures.filter { !$0.value.isEmpty }.keys).union(keyOrdered))
        let stored = order.map { definitions[$0] ?? [] }
        let hasClosures = order.map { closures[$0]?.isEmpty == false }
        let plans = stored.map { ExtractionPlan($0) }
        // The bytes every store key of a bucket starts with (the length prefix makes a match exact).
        let prefixes = order.map { Array(CollectionKey.prefix(ofBucket: $0.string).utf8) }
        var keys: [[String]] = Array(repeating: [], count: order.count)
        var columns: [[[(IndexValue, UInt32)]]] = stored.map { Array(repeating: [], count: $0.count) }
        var decoded: [[(key: String, record: EntryRecord)]] = Array(repeating: [], count: order.count)
        if !order.isEmpty {
            // One array for every entry's values, refilled in place.
            var values: [IndexValue?] = []
            do {
                try transaction.forEachRawEntryInPlace { key, payload in
                    guard key.first == 2, let which = prefixes.firstIndex(where: { key.starts(with: $0) }),
                        let view = try? EntryRecordView(payload)
                    else { return }
                    // Keys are stored from Swift strings: their bytes after the prefix are the entry's key.
                    let entryKey = String(
                        decoding: UnsafeRawBufferPointer(rebasing: key[prefixes[which].count...]), as: UTF8.self)
                    let id = UInt32(keys[which].count)
                    keys[which].append(entryKey)
                    plans[which].values(valueBytes: view.valueBytes, into: &values) { position in
                        IndexExtraction.value(stored[which][position], of: view)
                    }
                    for (position, value) in values.enumerated() {
                        if let value { columns[which][position].append((value, id)) }
                    }
                    if hasClosures[which], let record = try? EntryRecord(view) {
                        decoded[which].append((entryKey, record))
                    }
                }
            } catch {
                throw .store(error)
            }
        }
        var buckets: [ExactString: BucketIndexSet] = [:]
        for (which, bucket) in order.enumerated() {
            let set = BucketIndexSet(bucket: bucket.string)
            set.table.load(keys[which])
            set.load(stored[which], columns: columns[which])
            for closure in closures[bucket] ?? [] {
                _ = set.add(closure.definition, closure: closure, entries: decoded[which])
            }
            if keyOrdered.contains(bucket) { set.orderKeys() }
            buckets[bucket] = set
        }
        state.withLock { state in
            state.buckets = buckets
            state.changes &+= 1
        }
    }

    /// Every entry of `bucket`, decoded.
    static func entries(
        of bucket: String, _ transaction: MappedKV.Transaction
    ) throws(CollectionError) -> [(key: String, record: EntryRecord)] {
        let prefix = Array(CollectionKey.prefix(ofBucket: bucket).utf8)
        var entries: [(key: String, record: EntryRecord)] = []
        do {
            try transaction.forEachRawEntryInPlace { key, payload in
                guard key.starts(with: prefix),
                    let (owner, entryKey) = CollectionKey.decode(key),
                    owner == bucket, let record = try? EntryRecord(decoding: payload)
                else { return }
                entries.append((entryKey, record))
            }
        } catch {
            throw .store(error)
        }
        return entries
    }
}
