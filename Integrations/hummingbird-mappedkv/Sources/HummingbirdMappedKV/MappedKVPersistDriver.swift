// Hummingbird's `PersistDriver` over one MappedKV store in multi-process mode, so that every worker
// process of an app on one host, given the same directory, reads and writes one shared state live.
//
// Invariants: a value is returned only while it is alive (an expired entry reads as absent before
// any tidying removes it); `create`, an expiry-keeping `set` and `increment` decide and write under
// the store's exclusive lock, so two processes never both create one key, a concurrent expiry is
// never lost and no increment is lost; a stored value that does not decode as the asked type is
// `PersistError.invalidConversion`; nothing is ever removed except by `remove` or as expired; a
// driver with a namespace reads, writes and tidies only keys of its namespace; once the driver is
// shut down every call throws `MappedKVError.closed`.

import Foundation
import Hummingbird
import Logging
import MappedKV
import ServiceLifecycle

/// A Hummingbird persist driver that keeps its keys in a MappedKV store on the local disk, shared
/// live by every process that opens the same directory.
///
/// Values are stored as JSON with their expiry time (wall-clock milliseconds, so all processes
/// and restarts agree on it). Reads are served from the process's memory after a check that no
/// other process wrote (three loads, no system call); writes append to the memory-mapped file.
///
/// ```swift
/// let persist = try MappedKVPersistDriver(directory: "/var/lib/myapp/persist")
/// let app = Application(router: router, services: [persist])   // run() tidies expired entries
/// ```
public final class MappedKVPersistDriver: PersistDriver {
    /// The kind the driver marks its store with, so no other program's store is misread as one.
    static let storeKind = StoreKind(name: "hummingbird-persist", version: "1")

    /// The store under the driver.
    let store: MappedKV
    /// The driver's settings.
    public let configuration: Configuration
    /// Where the driver logs.
    let logger: Logger
    /// Now, in wall-clock nanoseconds since 1970; injected by tests.
    let now: @Sendable () -> Int64
    /// What every key of this driver starts with in the store: its namespace and a colon, or
    /// nothing without a namespace.
    let keyPrefix: String
    /// The decoder of every read (a `JSONDecoder` may be shared between threads).
    let decoder = JSONDecoder()

    /// Opens (creating it if needed) the persist store in `directory`.
    ///
    /// Every process given the same directory and configuration shares the same entries.
    ///
    /// - Parameters:
    ///   - directory: the folder of the store's files; created if missing.
    ///   - configuration: the store's ID, namespace, lock, encryption, metrics and tidying interval.
    ///   - logger: where the driver and its store log. When nil (the default), a logger labelled
    ///     ``Configuration/loggerLabel`` if that is set, otherwise nowhere.
    /// - Throws: ``MappedKVPersistError/invalidNamespace(_:reason:)`` for a namespace the driver
    ///   cannot keep apart; ``MappedKVError`` if the store cannot be opened: for example
    ///   ``MappedKVError/wrongStoreKind(id:expected:found:)`` when the ID names a store that is not a
    ///   persist store, or ``MappedKVError/modeConflict(id:reason:)`` when another process has it open
    ///   with another lock.
    public convenience init(
        directory: String, configuration: Configuration = Configuration(), logger: Logger? = nil
    ) throws {
        try self.init(
            directory: directory, configuration: configuration, logger: logger, now: PersistTime.systemNow,
            storeClock: .system)
    }

    /// Opens the persist store in `directory` with the clock `now` (nanoseconds since 1970), which
    /// the store's own times (its tidying turns) follow too.
    package convenience init(
        directory: String, configuration: Configuration, logger: Logger?, now: @escaping @Sendable () -> Int64
    ) throws {
        try self.init(
            directory: directory, configuration: configuration, logger: logger, now: now,
            storeClock: ExpiryClock(preciseNow: { .nanoseconds(now()) }))
    }

    /// Opens the persist store in `directory` with the clock `now` for the driver's times and
    /// `storeClock` for the store's.
    private init(
        directory: String, configuration: Configuration, logger: Logger?, now: @escaping @Sendable () -> Int64,
        storeClock: ExpiryClock
    ) throws {
        self.keyPrefix = try configuration.keyPrefix()
        let logger = logger ?? configuration.loggerLabel.map { Logger(label: $0) } ?? MappedKV.silentLogger
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        self.store = try MappedKV(
            id: configuration.storeID, directory: directory,
            configuration: configuration.storeConfiguration(clock: storeClock), logger: logger)
        self.configuration = configuration
        self.logger = logger
        self.now = now
    }

    /// Stores `value` under `key` unless a live value is there already.
    ///
    /// - Parameter expires: how long the value lives; nil for ever.
    /// - Throws: `PersistError.duplicate` if `key` holds a live value (in any process) or one this
    ///   driver did not write; an `EncodingError` if `value` does not encode as JSON;
    ///   ``MappedKVError`` for a key the store refuses (empty, over 16 KiB, or starting with
    ///   U+0001), a value too large, or a driver shut down.
    public func create<Object: Codable & Sendable>(key: String, value: Object, expires: Duration?) async throws {
        let key = try storedKey(key)
        let json = try JSONEncoder().encode(value)
        let created = try await store.withExclusiveLock { transaction in
            let now = self.now()
            switch try Self.existing(key, in: transaction, at: now) {
            case .absent, .expired(_): break
            case .alive, .foreign: return false  // a value this driver cannot read is never overwritten by create
            }
            let expiresAt = expires.map { PersistTime.expiry(after: $0, from: now) }
            try transaction.set(PersistEnvelope.encode(json: json, expiresAt: expiresAt), forKey: key)
            return true
        }
        guard created else { throw PersistError.duplicate }
        logger.trace("persist create", metadata: ["key": "\(key)"])
    }

    /// Stores `value` under `key`, replacing any value there.
    ///
    /// A set without an expiry reads the old entry and writes the new one in one exclusive
    /// section, so it keeps an expiry another process set; it does not check that the entry is
    /// still wanted: a set racing a `remove` in another process can bring the key back (see the
    /// package README's "Sessions" section).
    ///
    /// - Parameter expires: how long the value lives. When nil and `key` holds a value with an
    ///   expiry time, that time is kept (as the protocol requires), even when it has passed and
    ///   the entry is not yet tidied away, as Hummingbird's memory driver does; otherwise the value
    ///   lives for ever.
    /// - Throws: an `EncodingError` if `value` does not encode as JSON; ``MappedKVError`` for a key
    ///   the store refuses, a value too large, or a driver shut down.
    public func set<Object: Codable & Sendable>(key: String, value: Object, expires: Duration?) async throws {
        let key = try storedKey(key)
        let json = try JSONEncoder().encode(value)
        if let expires {
            // A new expiry needs nothing from the old entry: one append, no exclusive section.
            let expiresAt = PersistTime.expiry(after: expires, from: now())
            try store.set(PersistEnvelope.encode(json: json, expiresAt: expiresAt), forKey: key)
        } else {
            try await store.withExclusiveLock { transaction in
                // An expired entry's time is kept too, as Hummingbird's memory driver keeps it: a
                // session written back just after it expired stays expired instead of living for
                // ever.
                var kept: Int64? = nil
                switch try Self.existing(key, in: transaction, at: self.now()) {
                case .alive(let expiresAt, _): kept = expiresAt
                case .expired(let expiresAt): kept = expiresAt
                case .absent, .foreign: break
                }
                try transaction.set(PersistEnvelope.encode(json: json, expiresAt: kept), forKey: key)
            }
        }
        logger.trace("persist set", metadata: ["key": "\(key)"])
    }

    /// The value of `key` as `Object`, or nil if there is none or it has expired.
    ///
    /// - Throws: `PersistError.invalidConversion` if the stored value does not decode as `Object`.
    public func get<Object: Codable & Sendable>(key: String, as: Object.Type) async throws -> Object? {
        try read(key: key, as: Object.self)?.object
    }

    /// The value of `key` as `Object` with the time it has left to live (nil if it never
    /// expires), or nil if there is none or it has expired.
    ///
    /// The time left is measured to the nanosecond against the stored millisecond of expiry, so
    /// it is less than the duration the value was set with as soon as any time has passed.
    ///
    /// - Throws: `PersistError.invalidConversion` if the stored value does not decode as `Object`.
    public func getWithTTL<Object: Codable & Sendable>(
        key: String, as: Object.Type
    ) async throws -> (object: Object, ttl: Duration?)? {
        guard let (object, expiresAt, now) = try read(key: key, as: Object.self) else { return nil }
        return (object, expiresAt.map { PersistTime.timeLeft(until: $0, at: now) })
    }

    /// Removes the value of `key`, if any (in every process).
    public func remove(key: String) async throws {
        let key = try storedKey(key)
        try store.removeValue(forKey: key)
        logger.trace("persist remove", metadata: ["key": "\(key)"])
    }

    /// The live value of `key` decoded as `Object`, its expiry time and the time it was read at.
    private func read<Object: Decodable>(
        key: String, as: Object.Type
    ) throws -> (object: Object, expiresAt: Int64?, now: Int64)? {
        let key = try storedKey(key)
        var now = self.now()
        let found: LiveEntry?
        do {
            // Only the JSON is copied under the handle's lock; it is decoded after, so concurrent
            // requests of this process decode in parallel. The time is read here, after the
            // store caught up: read before, it could be older than a write the read returns,
            // and the time left would exceed what was set.
            found = try store.withBytes(forKey: key) { bytes -> LiveEntry in
                now = self.now()
                guard let envelope = PersistEnvelope.parse(bytes) else { return .foreign }
                guard envelope.isAlive(at: now) else { return .expired }
                let json = Data(UnsafeRawBufferPointer(rebasing: bytes[envelope.jsonOffset...]))
                return .alive(json: json, expiresAt: envelope.expiresAt)
            }
        } catch .valueDecodingFailed {
            // Not a bytes value: something other than this driver wrote the key.
            throw PersistError.invalidConversion
        }
        switch found {
        case nil, .expired?:
            return nil
        case .foreign?:
            throw PersistError.invalidConversion
        case .alive(let json, let expiresAt)?:
            guard let object = try? decoder.decode(Object.self, from: json) else {
                throw PersistError.invalidConversion
            }
            return (object, expiresAt, now)
        }
    }

    /// What a read found under a key that is present.
    private enum LiveEntry {
        /// A live value: its JSON and expiry time.
        case alive(json: Data, expiresAt: Int64?)
        /// A value that has expired, not yet tidied away.
        case expired
        /// Bytes this driver did not write.
        case foreign
    }

    /// What a key holds, seen from inside an exclusive section.
    enum Existing {
        /// Nothing.
        case absent
        /// A live value: its expiry time if it has one, and its JSON.
        case alive(expiresAt: Int64?, json: ArraySlice<UInt8>)
        /// A value that has expired, and when.
        case expired(expiresAt: Int64)
        /// Bytes this driver did not write.
        case foreign
    }

    /// What the stored key `key` holds in `transaction` at `now`.
    static func existing(_ key: String, in transaction: MappedKV.Transaction, at now: Int64) throws -> Existing {
        let stored: [UInt8]
        switch Result(catching: { () throws(MappedKVError) -> [UInt8]? in try transaction.bytes(forKey: key) }) {
        case .success(nil): return .absent
        case .success(let bytes?): stored = bytes
        case .failure(.valueDecodingFailed): return .foreign
        case .failure(let error): throw error
        }
        guard let envelope = stored.withUnsafeBytes({ PersistEnvelope.parse($0) }) else { return .foreign }
        guard envelope.isAlive(at: now) else { return .expired(expiresAt: envelope.expiresAt ?? .min) }
        return .alive(expiresAt: envelope.expiresAt, json: stored[envelope.jsonOffset...])
    }

    /// The key `key` is stored under: in the driver's namespace. Refuses a key that would
    /// overwrite the store's kind mark.
    func storedKey(_ key: String) throws -> String {
        guard key.utf8.first != 1 else {
            throw MappedKVError.invalidKey("persist keys may not begin with U+0001, which marks the store's kind")
        }
        return keyPrefix.isEmpty ? key : keyPrefix + key
    }
}
