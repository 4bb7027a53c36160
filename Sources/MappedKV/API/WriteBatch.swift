import Foundation
import MappedKVFormat

// The handle a `batch` closure records its writes on. The invariant: the handle only records
// (checking keys and encoding values as it goes, so a bad call throws at the call); nothing
// reaches the store until the closure returns, and then all of it in one commit. After the
// closure returns every call throws.

extension MappedKV {
    /// The writes of one ``MappedKV/batch(_:)`` call: sets and removes, typed as the store's own,
    /// committed together when the closure returns.
    ///
    /// Each call checks its key and encodes its value at once (so an invalid key or a value that
    /// cannot be encoded throws right there), but nothing is written until the closure returns;
    /// then the whole batch is appended in one write. The handle has no reads: the closure runs
    /// without the store's lock, and reading back a value set earlier in the same batch would
    /// not see it. Use it only inside the closure it was passed to, on that thread.
    ///
    /// ``Configuration/comparesBeforeSet`` does not apply to batches: every set is written.
    public final class WriteBatch {
        /// The recorded operations. Only the closure's thread touches them, one call at a time, so
        /// release builds skip the dynamic exclusivity checks (about a tenth of a batched set).
        #if !DEBUG
        @exclusivity(unchecked)
        #endif
        var operations = BatchOperations()
        private var isActive = true

        /// A batch that records into `operations` (emptied, its buffers kept from an earlier batch).
        init(operations: BatchOperations = BatchOperations()) { self.operations = operations }

        /// Ends the batch: later calls throw.
        func end() { isActive = false }

        /// What the batch recorded, handed over without a copy; the batch is left empty.
        func takeOperations() -> BatchOperations {
            var taken = BatchOperations()
            swap(&taken, &operations)
            return taken
        }

        /// The number of sets and removes recorded so far.
        public var count: Int { operations.count }

        private func checkActive() throws(MappedKVError) {
            guard isActive else { throw .closed("the batch has ended: use it only inside MappedKV.batch") }
        }

        /// Stores `value` under `key`, replacing any previous value (as ``MappedKV/set(_:forKey:)-(V,_)``).
        ///
        /// - Throws: ``MappedKVError/invalidKey(_:)`` for an empty key or one over 16 KiB.
        public func set<V: PayloadCodable & Sendable>(_ value: V, forKey key: String) throws(MappedKVError) {
            try checkActive()
            try operations.recordSet(value, forKey: key)
        }

        /// Stores `value` under `key`, to expire `duration` after the batch commits (whole
        /// seconds, rounded up; `.zero` means never), as ``MappedKV/set(_:forKey:expiresAfter:)-497vm``.
        /// Key expiry must be on when the batch commits, or the whole batch throws
        /// ``MappedKVError/invalidArgument(_:)`` and nothing is written.
        public func set<V: PayloadCodable & Sendable>(
            _ value: V, forKey key: String, expiresAfter duration: Duration
        ) throws(MappedKVError) {
            try checkActive()
            try operations.recordSet(value, forKey: key, expiresAfter: MappedKV.expirySeconds(duration))
        }

        /// Stores a bytes value under `key` (specialized, as ``MappedKV/set(_:forKey:)-([UInt8],_)``).
        public func set(_ bytes: [UInt8], forKey key: String) throws(MappedKVError) {
            try checkActive()
            try operations.recordSet(bytes, forKey: key)
        }

        /// Stores any `Encodable` value under `key` as the store's `set(_:forKey:)` does: its
        /// native MMKV payload if `V` has one, otherwise JSON (sorted keys) in a bytes payload.
        public func set<V: Encodable>(_ value: V, forKey key: String) throws(MappedKVError) {
            let encoder = JSONEncoder()
            encoder.outputFormatting = .sortedKeys
            try set(value, forKey: key, encoder: encoder)
        }

        /// Stores any `Encodable` value under `key`, encoding types without a native payload with `encoder`.
        public func set<V: Encodable>(_ value: V, forKey key: String, encoder: JSONEncoder) throws(MappedKVError) {
            try checkActive()
            if let native = V.self as? any (PayloadCodable & Sendable).Type {
                return try recordNative(value, as: native, forKey: key, expiresAfter: nil)
            }
            try operations.recordSet(try Self.json(value, forKey: key, encoder: encoder), forKey: key)
        }

        /// Stores any `Encodable` value under `key`, to expire `duration` after the batch commits.
        public func set<V: Encodable>(
            _ value: V, forKey key: String, expiresAfter duration: Duration
        ) throws(MappedKVError) {
            try checkActive()
            let seconds = MappedKV.expirySeconds(duration)
            if let native = V.self as? any (PayloadCodable & Sendable).Type {
                return try recordNative(value, as: native, forKey: key, expiresAfter: seconds)
            }
            let encoder = JSONEncoder()
            encoder.outputFormatting = .sortedKeys
            try operations.recordSet(
                try Self.json(value, forKey: key, encoder: encoder), forKey: key, expiresAfter: seconds)
        }

        /// Stores a value that has a native payload (the overload for types that are both
        /// `PayloadCodable` and `Encodable`).
        public func set<V: PayloadCodable & Sendable & Encodable>(_ value: V, forKey key: String) throws(MappedKVError)
        {
            try checkActive()
            try operations.recordSet(value, forKey: key)
        }

        /// Stores a value that has a native payload, to expire `duration` after the batch commits.
        public func set<V: PayloadCodable & Sendable & Encodable>(
            _ value: V, forKey key: String, expiresAfter duration: Duration
        ) throws(MappedKVError) {
            try checkActive()
            try operations.recordSet(value, forKey: key, expiresAfter: MappedKV.expirySeconds(duration))
        }

        /// Removes `key` (as ``MappedKV/removeValue(forKey:)``); removing an absent key does nothing.
        public func removeValue(forKey key: String) throws(MappedKVError) {
            try checkActive()
            try operations.recordRemove(forKey: key)
        }

        /// `value` opened from an existential metatype as its native type `N`.
        private func recordNative<V, N: PayloadCodable & Sendable>(
            _ value: V, as type: N.Type, forKey key: String, expiresAfter seconds: UInt32?
        ) throws(MappedKVError) {
            guard let native = value as? N else {
                throw .valueEncodingFailed(key: key, reason: "\(V.self) did not cast to its own native type \(N.self)")
            }
            try operations.recordSet(native, forKey: key, expiresAfter: seconds)
        }

        private static func json<V: Encodable>(
            _ value: V, forKey key: String, encoder: JSONEncoder
        ) throws(MappedKVError) -> Data {
            do { return try encoder.encode(value) } catch { throw .valueEncodingFailed(key: key, reason: "\(error)") }
        }
    }
}
