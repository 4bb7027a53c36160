// Vapor's `SessionDriver` over the sessions store of a directory that several app processes share,
// so a session made by one worker process is read by the next request whichever process takes it.
// Invariants: a session lasts `lifetime` from its last create or update (the sessions middleware
// updates every session a request used, so an active session slides forward and an idle one
// expires); an update of a session that is gone (logged out or expired, in any process) does not
// bring it back; a session ID is 32 random bytes from the system's generator; a session stored as
// something other than session data is an error for the request, never a crash.

import Foundation
import Logging
import MappedKV
import NIOCore
import Vapor

/// A Vapor `SessionDriver` that keeps session data as records of a multi-process MappedKV store,
/// shared by every process of the host that opens the same directory.
///
/// Make one with `app.sessions.use(.mappedKV(directory:configuration:))`, then add
/// `app.sessions.middleware`. Each session is stored as JSON and expires
/// ``MappedKVSessionsConfiguration/lifetime`` after the last request that used it (one week by
/// default, the lifetime of the cookie of Vapor's default `SessionsConfiguration`): keep the two in
/// step when you change either. Expiry counts whole seconds, rounded up, so a session lasts its
/// lifetime and less than a second more.
///
/// Sessions are records, not cache entries: no limit of a cache evicts them. One leaves the store
/// when it expires or when it is deleted (`req.session.destroy()`), and an expired one is a miss at
/// once; the tidy that runs at boot and every ``MappedKVSessionsConfiguration/tidyInterval`` gives
/// the bytes of expired ones back.
///
/// When a request ends after its session was deleted by another request (a logout in another
/// process, say) or expired, ``updateSession(_:to:for:)`` does not write the session back: the
/// logout stands. It returns the same ID, so the sessions middleware sets a cookie naming a
/// session that is no longer there, and the client's next request starts a new, empty session,
/// as it would with a cookie that names an unknown session.
public struct MappedKVSessions: SessionDriver, Sendable {
    /// The sessions, or why the store could not be opened (then every call fails with that error).
    let records: Result<SessionRecords, MappedKVVaporError>

    /// How long a session lasts after its last create or update.
    public var lifetime: Duration { (try? records.get().lifetime) ?? .zero }

    /// One week: the lifetime of the cookie that Vapor's default `SessionsConfiguration` sets.
    public static let defaultLifetime = MappedKVSessionsConfiguration.defaultLifetime

    /// A driver over `store`, a sessions store the caller opened and closes after the application
    /// shuts down.
    ///
    /// Open the store multi-process with key expiry on (`Configuration(isMultiProcess: true,
    /// keyExpiry: .zero)`): without key expiry every write of a session fails. The provider
    /// `app.sessions.use(.mappedKV(directory:configuration:))` opens the store so, and also tidies
    /// it and moves the first release's sessions into it: prefer it.
    ///
    /// - Parameters:
    ///   - store: the store; its key expiry must be on.
    ///   - lifetime: how long a session lasts after the last request that used it.
    ///   - namespace: the namespace of this application's sessions in the store; nil is the default.
    public init(store: MappedKV, lifetime: Duration = Self.defaultLifetime, namespace: String? = nil) {
        let records = SessionRecords(
            store: store, keys: KeyNamespace(area: SessionRecords.area, namespace: namespace),
            lifetime: max(lifetime, .seconds(1)))
        self.init(records: .success(records))
    }

    /// A driver over `records`, or one whose every call fails with the error of opening them.
    init(records: Result<SessionRecords, MappedKVVaporError>) {
        self.records = records
    }

    /// Stores `data` as a new session under a new random ID and returns the ID.
    public func createSession(_ data: SessionData, for request: Request) -> EventLoopFuture<SessionID> {
        request.eventLoop.makeCompletedFuture { try records.get().create(data) }
    }

    /// The data of session `sessionID`, or nil when there is none or it expired.
    ///
    /// The future fails with ``MappedKVVaporError/valueDoesNotDecode(key:type:reason:)`` when the
    /// record is not session data.
    public func readSession(_ sessionID: SessionID, for request: Request) -> EventLoopFuture<SessionData?> {
        request.eventLoop.makeCompletedFuture { try records.get().read(sessionID) }
    }

    /// Replaces the data of session `sessionID` and starts its lifetime again, if the session is
    /// still there; returns `sessionID` either way.
    ///
    /// A session that is gone (deleted or expired, by any process) stays gone: the check and the
    /// write run in one exclusive section of the store, so no logout is undone by a request that
    /// was still running when it happened.
    public func updateSession(
        _ sessionID: SessionID, to data: SessionData, for request: Request
    ) -> EventLoopFuture<SessionID> {
        request.eventLoop.makeCompletedFuture {
            let records = try records.get()
            if try !records.updateIfPresent(sessionID, to: data) {
                request.logger.debug("a session ended before its request; not written back")
            }
            return sessionID
        }
    }

    /// Removes session `sessionID`; nothing happens when there is none.
    public func deleteSession(_ sessionID: SessionID, for request: Request) -> EventLoopFuture<Void> {
        request.eventLoop.makeCompletedFuture { try records.get().delete(sessionID) }
    }

    /// A new session ID: 32 bytes from the system's random generator, in URL-safe base64 without
    /// padding.
    static func newSessionID() -> SessionID { SessionRecords.newSessionID() }
}
