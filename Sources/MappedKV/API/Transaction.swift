import MappedKVFormat

extension MappedKV {
    /// The store as seen inside ``MappedKV/withExclusiveLock(_:)``: every read and write runs
    /// under the exclusive inter-process lock already held, so a read-modify-write is atomic
    /// across threads and processes.
    ///
    /// Use it only inside the closure it was passed to; afterwards every call throws
    /// ``MappedKVError/closed(_:)``.
    public final class Transaction: KeyValueAccess {
        private let core: StoreCore
        private var isActive = true

        init(core: StoreCore) { self.core = core }

        /// Ends the transaction: later calls throw.
        func end() { isActive = false }

        private func activeCore() throws(MappedKVError) -> StoreCore {
            guard isActive else { throw .closed("the transaction has ended: use it only inside withExclusiveLock") }
            return core
        }

        /// Stores `value` under `key`.
        public func set<V: PayloadCodable & Sendable>(_ value: V, forKey key: String) throws(MappedKVError) {
            try activeCore().set(value, forKey: key)
        }

        /// The value of `key` decoded as `type`, or nil if the key is absent.
        public func value<V: PayloadCodable & Sendable>(
            forKey key: String, as type: V.Type = V.self
        ) throws(MappedKVError) -> V? {
            try activeCore().value(forKey: key, as: V.self)
        }

        /// Removes `key`.
        public func removeValue(forKey key: String) throws(MappedKVError) {
            try activeCore().removeValue(forKey: key)
        }

        /// Removes every key, as ``MappedKV/clearAll()``, inside the transaction.
        public func clearAll() throws(MappedKVError) {
            try activeCore().clearAll()
        }

        /// Whether `key` has a value.
        public func contains(_ key: String) throws(MappedKVError) -> Bool {
            try activeCore().contains(key)
        }

        /// The number of keys.
        public var count: Int {
            get throws(MappedKVError) { try activeCore().count() }
        }

        /// Every key, sorted by UTF-8 bytes.
        public var allKeys: [String] {
            get throws(MappedKVError) {
                try activeCore().allKeys().sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
            }
        }
    }
}
