// The sessions of one namespace as records of a multi-process MappedKV store of their own
// (`vapor-sessions` in the directory), with key expiry on. Invariants: a session leaves the store
// only by its own expiry or a delete, never for space or age (the store has no limits to keep);
// a session is written back only while it is present, checked and written inside one exclusive
// section, so a request that ends after the session was deleted or expired in any process never
// brings it back; every key starts with the namespace's prefix.

import Foundation
import Logging
import MappedKV
import Vapor

/// Session data under one namespace of the sessions store.
struct SessionRecords: Sendable {
    /// The store's ID in the directory.
    static let storeID = "vapor-sessions"
    /// The kind the store is marked with, so that no other layer and no plain open mistakes it for
    /// theirs.
    static let kind = StoreKind(name: "vapor-mappedkv.sessions", version: "1")
    /// The area of session keys, before the namespace.
    static let area = "session"

    /// The store.
    let store: MappedKV
    /// The prefix of this namespace's keys.
    let keys: KeyNamespace
    /// How long a session lasts after its last create or update.
    let lifetime: Duration

    /// Opens the sessions store in `directory` as `configuration` asks: multi-process, marked with
    /// ``kind``, key expiry on.
    static func openStore(
        directory: String, configuration: MappedKVSessionsConfiguration, logger: Logger
    ) throws(MappedKVError) -> MappedKV {
        let storeConfiguration = Configuration(
            isMultiProcess: true, cryptKey: configuration.cryptKey, clock: configuration.clock,
            keyExpiry: .zero, processLock: .sharedMemory, storeKind: kind, metrics: configuration.metrics)
        return try MappedKV(id: storeID, directory: directory, configuration: storeConfiguration, logger: logger)
    }

    /// The store key of session `id`.
    func key(_ id: SessionID) -> String { keys.prefix + id.string }

    /// The data of session `id`, or nil when it is absent or expired.
    ///
    /// - Throws: ``MappedKVVaporError/valueDoesNotDecode(key:type:reason:)`` when the record is
    ///   not session data; the store's `MappedKVError` when it fails.
    func read(_ id: SessionID) throws -> SessionData? {
        guard let json = try store.string(forKey: key(id)) else { return nil }
        return try Self.decode(json, id: id)
    }

    /// Stores `data` as a new session and returns its new random ID.
    func create(_ data: SessionData) throws -> SessionID {
        let id = Self.newSessionID()
        try store.set(try Self.encode(data, id: id), forKey: key(id), expiresAfter: lifetime)
        return id
    }

    /// Replaces the data of session `id` and starts its lifetime again, if the session is still
    /// there; returns whether it was. An absent session (deleted or expired, by any process) is
    /// left absent.
    func updateIfPresent(_ id: SessionID, to data: SessionData) throws -> Bool {
        let json = try Self.encode(data, id: id)
        let key = key(id)
        return try store.withExclusiveLock { transaction in
            guard try transaction.contains(key) else { return false }
            try transaction.set(json, forKey: key, expiresAfter: lifetime)
            return true
        }
    }

    /// Removes session `id`; nothing happens when there is none.
    func delete(_ id: SessionID) throws {
        try store.removeValue(forKey: key(id))
    }

    /// Session `id` as an error names it: its first six characters, since the whole ID is a
    /// credential and errors reach logs (and, in development, response bodies).
    static func redacted(_ id: SessionID) -> String { "session " + id.string.prefix(6) + "…" }

    /// `data` as the JSON text a record holds.
    static func encode(_ data: SessionData, id: SessionID) throws -> String {
        do {
            return String(decoding: try JSONEncoder().encode(data), as: UTF8.self)
        } catch {
            throw MappedKVVaporError.valueDoesNotEncode(
                key: redacted(id), type: String(reflecting: SessionData.self), reason: String(describing: error))
        }
    }

    /// The session data in the JSON text `json`.
    static func decode(_ json: String, id: SessionID) throws -> SessionData {
        do {
            return try JSONDecoder().decode(SessionData.self, from: Data(json.utf8))
        } catch {
            throw MappedKVVaporError.valueDoesNotDecode(
                key: redacted(id), type: String(reflecting: SessionData.self), reason: String(describing: error))
        }
    }

    /// A new session ID: 32 bytes from the system's random generator, in URL-safe base64 without
    /// padding, so it goes into a cookie without quoting.
    static func newSessionID() -> SessionID {
        var generator = SystemRandomNumberGenerator()
        let bytes = (0..<32).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
        let text = Data(bytes).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
        return SessionID(string: text)
    }
}
