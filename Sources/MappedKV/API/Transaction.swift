import MappedKVFormat

// The store as a closure-form exclusive section sees it. The invariant: a transaction touches the
// store only while the section it was made for is open; after the closure returns every call
// throws. Each call takes the store's mutex for its own length only, as the store's calls do, so
// the closure may also call the store itself (its calls are served, see MappedKV.withCore).

extension MappedKV {
    /// The store as seen inside ``MappedKV/withExclusiveLock(_:)``:
    /// every read and write runs under the exclusive inter-process lock already held, so a
    /// read-modify-write is atomic across threads and processes.
    ///
    /// It has every read and write by key a store has (``KeyValueAccess``: the typed getters,
    /// `set` with or without an expiry, `payload`, `entries`, `clearAll`...), plus
    /// ``forEachEntry(_:)``. Calls on the store itself from the same thread are served under
    /// the same lock too, for what a transaction lacks (`trim()`, `sync()`, `info()`...).
    ///
    /// Use it only inside the closure it was passed to, on that closure's thread; afterwards every
    /// call throws ``MappedKVError/closed(_:)``.
    public final class Transaction: KeyValueAccess {
        private let shared: SharedStore
        private var isActive = true

        init(shared: SharedStore) { self.shared = shared }

        /// Ends the transaction: later calls throw.
        func end() { isActive = false }

        /// Makes an ended transaction that nothing outside the store references serve a new section.
        func begin() { isActive = true }

        /// Runs `body` on the store, in the section this transaction belongs to.
        private func access<R: Sendable>(_ body: (StoreCore) throws(MappedKVError) -> R) throws(MappedKVError) -> R {
            guard isActive else { throw .closed("the transaction has ended: use it only inside withExclusiveLock") }
            return try shared.core.withLock { (core) throws(MappedKVError) -> R in try body(core) }
        }

        /// Stores `value` under `key`.
        public func set<V: PayloadCodable & Sendable>(_ value: V, forKey key: String) throws(MappedKVError) {
            try access { (core) throws(MappedKVError) in try core.set(value, forKey: key) }
        }

        /// Stores `value` under `key`, to expire `duration` after now, as
        /// `MappedKV.set(_:forKey:expiresAfter:)`.
        public func set<V: PayloadCodable & Sendable>(
            _ value: V, forKey key: String, expiresAfter duration: Duration
        ) throws(MappedKVError) {
            let seconds = MappedKV.expirySeconds(duration)
            try access { (core) throws(MappedKVError) in try core.set(value, forKey: key, expiresAfter: seconds) }
        }

        /// The value of `key` decoded as `type`, or nil if the key is absent.
        public func value<V: PayloadCodable & Sendable>(
            forKey key: String, as type: V.Type = V.self
        ) throws(MappedKVError) -> V? {
            try access { (core) throws(MappedKVError) -> V? in try core.value(forKey: key, as: V.self) }
        }

        /// The stored payload bytes of `key`, or nil.
        public func payload(forKey key: String) throws(MappedKVError) -> [UInt8]? {
            try access { (core) throws(MappedKVError) -> [UInt8]? in try core.payload(forKey: key) }
        }

        /// Calls `body` with the stored payload bytes of `key` where they lie (nil if the key is
        /// absent), without copying them, for the package's own modules: the buffer is valid only
        /// during the call, and `body` must not call the store (its lock is held).
        package func withPayload(
            forKey key: String, _ body: (UnsafeRawBufferPointer?) -> Void
        ) throws(MappedKVError) {
            try access { (core) throws(MappedKVError) in try core.withPayload(forKey: key, body) }
        }

        /// Removes `key`.
        public func removeValue(forKey key: String) throws(MappedKVError) {
            try access { (core) throws(MappedKVError) in try core.removeValue(forKey: key) }
        }

        /// The bytes value of `key`, or nil (specialized here: the protocol's generic getter runs
        /// unspecialized when called from another module).
        public func bytes(forKey key: String) throws(MappedKVError) -> [UInt8]? {
            try value(forKey: key, as: [UInt8].self)
        }

        /// Stores a bytes value under `key` (specialized, as ``bytes(forKey:)``).
        public func set(_ bytes: [UInt8], forKey key: String) throws(MappedKVError) {
            try access { (core) throws(MappedKVError) in try core.set(bytes, forKey: key) }
        }

        /// Calls `body` with every live key and its stored payload bytes (the encoding of
        /// docs/FORMAT.md 2.5), in no particular order and without copying the payloads: the
        /// cheapest way to read a whole store. The payload buffer is valid only during the call.
        /// `body` sees the entries as they were when the walk began, even if it writes.
        public func forEachEntry(_ body: (_ key: String, _ payload: UnsafeRawBufferPointer) throws -> Void) throws {
            try forEachRawEntry { key, payload in try body(String(decoding: key, as: UTF8.self), payload) }
        }

        /// ``forEachEntry(_:)`` with the key's UTF-8 bytes instead of a `String`: nothing is
        /// allocated per entry. Both buffers are valid only during the call.
        public func forEachRawEntry(
            _ body: (_ key: UnsafeRawBufferPointer, _ payload: UnsafeRawBufferPointer) throws -> Void
        ) throws {
            // Walked outside the store's mutex, so `body` may call the store.
            try access { (core) throws(MappedKVError) -> LiveEntries in try core.liveEntries() }.forEach(body)
        }

        /// ``forEachRawEntry(_:)`` in file order without listing the entries first, for the
        /// package's own modules (so a walk of a large store builds no list as long as the
        /// store): `body` runs under the store's lock, so it must not call the store.
        package func forEachRawEntryInPlace(
            _ body: (_ key: UnsafeRawBufferPointer, _ payload: UnsafeRawBufferPointer) -> Void
        ) throws(MappedKVError) {
            try access { (core) throws(MappedKVError) in try core.forEachLiveEntry(body) }
        }

        /// Every key with its stored payload bytes, sorted by key bytes.
        public func entries() throws(MappedKVError) -> [(key: String, payload: [UInt8])] {
            try access { (core) throws(MappedKVError) -> [(key: String, payload: [UInt8])] in try core.entries() }
        }

        /// Removes every key, as ``MappedKV/clearAll()``, inside the transaction.
        public func clearAll() throws(MappedKVError) {
            try access { (core) throws(MappedKVError) in try core.clearAll() }
        }

        /// Whether `key` has a value.
        public func contains(_ key: String) throws(MappedKVError) -> Bool {
            try access { (core) throws(MappedKVError) -> Bool in try core.contains(key) }
        }

        /// The number of keys.
        public var count: Int {
            get throws(MappedKVError) { try access { (core) throws(MappedKVError) -> Int in try core.count() } }
        }

        /// Every key, sorted by UTF-8 bytes.
        public var allKeys: [String] {
            get throws(MappedKVError) {
                try access { (core) throws(MappedKVError) -> [String] in try core.allKeys() }
                    .sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
            }
        }
    }
}
