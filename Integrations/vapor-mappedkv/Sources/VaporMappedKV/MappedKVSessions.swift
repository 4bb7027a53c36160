// Vapor's `SessionDriver` over a MappedKV disk cache directory that several app processes share, so
// a session made by one worker process is read by the next request whichever process takes it.
// Invariants: a session lasts `lifetime` from its last create or update (the sessions middleware
// updates every session a request used, so an active session slides forward and an idle one
// expires); a session ID is 32 random bytes from the system's generator; a session stored as
// something other than session data is an error for the request, never a crash.

import Foundation
import MappedKVCache
import NIOCore
import Vapor

/// A Vapor `SessionDriver` that keeps session data in a MappedKV `DiskCache` directory shared by
/// every process of the host that opens it.
///
/// Make one with `app.sessions.use(.mappedKV(directory:))`, then add `app.sessions.middleware`.
/// Each session is stored as JSON and expires `lifetime` after the last request that used it (one
/// week by default, the lifetime of the cookie of Vapor's default `SessionsConfiguration`): keep the
/// two in step when you change either. Expired sessions are misses at once and leave the directory
/// at its next trim.
public struct MappedKVSessions: SessionDriver, Sendable {
    /// The sessions, under the driver's key prefix.
    let entries: JSONEntries
    /// How long a session lasts after its last create or update.
    public let lifetime: Duration

    /// The prefix of session keys in the directory, keeping them apart from the cache's.
    static let keyPrefix = "vapor.session/"

    /// One week: the lifetime of the cookie that Vapor's default `SessionsConfiguration` sets.
    public static let defaultLifetime: Duration = .seconds(7 * 24 * 60 * 60)

    /// A driver over `disk`, whose sessions last `lifetime` after their last use.
    ///
    /// - Parameters:
    ///   - disk: the directory, opened by the caller, who also closes it.
    ///   - lifetime: how long a session lasts after the last request that used it.
    public init(disk: DiskCache, lifetime: Duration = MappedKVSessions.defaultLifetime) {
        self.init(entries: JSONEntries(disk: .success(disk), prefix: Self.keyPrefix), lifetime: lifetime)
    }

    /// A driver over `entries`, whose sessions last `lifetime` after their last use.
    init(entries: JSONEntries, lifetime: Duration) {
        self.entries = entries
        self.lifetime = lifetime
    }

    /// Stores `data` as a new session under a new random ID and returns the ID.
    public func createSession(_ data: SessionData, for request: Request) -> EventLoopFuture<SessionID> {
        request.eventLoop.makeCompletedFuture {
            let id = Self.newSessionID()
            try entries.set(data, forKey: id.string, timeToLive: lifetime)
            return id
        }
    }

    /// The data of session `sessionID`, or nil when there is none or it expired.
    public func readSession(_ sessionID: SessionID, for request: Request) -> EventLoopFuture<SessionData?> {
        request.eventLoop.makeCompletedFuture {
            try entries.value(forKey: sessionID.string, as: SessionData.self)
        }
    }

    /// Replaces the data of session `sessionID` and starts its lifetime again.
    public func updateSession(
        _ sessionID: SessionID, to data: SessionData, for request: Request
    ) -> EventLoopFuture<SessionID> {
        request.eventLoop.makeCompletedFuture {
            try entries.set(data, forKey: sessionID.string, timeToLive: lifetime)
            return sessionID
        }
    }

    /// Removes session `sessionID`; nothing happens when there is none.
    public func deleteSession(_ sessionID: SessionID, for request: Request) -> EventLoopFuture<Void> {
        request.eventLoop.makeCompletedFuture {
            try entries.removeValue(forKey: sessionID.string)
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
