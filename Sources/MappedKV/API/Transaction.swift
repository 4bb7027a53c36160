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

        /// The bytes value of `key`, or nil (specialized here: the protocol's generic getter runs
        /// unspecialized when called from another module).
        public func bytes(forKey key: String) throws(MappedKVError) -> [UInt8]? {
            try activeCore().value(forKey: key, as: [UInt8].self)
        }

        /// Stores a bytes value under `key` (specialized, as ``bytes(forKey:)``).
        public func set(_ bytes: [UInt8], forKey key: String) throws(MappedKVError) {
            try activeCore().set(bytes, forKey: key)
        }

        /// Calls `body` with every live key and its stored payload bytes (the encoding of
        /// docs/FORMAT.md 2.5), in no particular order and without copying the payloads: the
        /// cheapest way to read a whole store. The payload buffer is valid only during the call.
        public func forEachEntry(_ body: (_ key: String, _ payload: UnsafeRawBufferPointer) throws -> Void) throws {
            try activeCore().forEachEntry { key, payload in
                try body(String(decoding: key, as: UTF8.self), payload)
            }
        }

        /// ``forEachEntry(_:)`` with the key's UTF-8 bytes instead of a `String`: nothing is
        /// allocated per entry. Both buffers are valid only during the call.
        public func forEachRawEntry(
            _ body: (_ key: UnsafeRawBufferPointer, _ payload: UnsafeRawBufferPointer) throws -> Void
        ) throws {
            try activeCore().forEachEntry(body)
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
