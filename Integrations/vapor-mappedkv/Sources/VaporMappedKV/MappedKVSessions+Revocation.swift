// Finding and ending every session of one user (after a password change, say): a walk over the
// sessions store in bounded steps (`MappedKV.sweepStep`), looking at this namespace's sessions
// only. Invariants: a session present for the whole walk is seen exactly once; a revocation
// removes a session in the same exclusive section in which it read the session's data, so a
// session is never removed on the strength of data another request has since replaced; expired
// sessions are never listed (the walk removes them).

import Foundation
import MappedKV
import MappedKVFormat
import Vapor

extension MappedKVSessions {
    /// The IDs of this namespace's live sessions whose data holds `value` under `key`.
    ///
    /// The store is walked in short steps, so other requests go on meanwhile; a session created or
    /// changed during the walk may or may not be listed.
    ///
    /// ```swift
    /// let sessions = app.sessions.driver as? MappedKVSessions
    /// let open = try await sessions?.sessionIDs(where: "userID", is: "42") ?? []
    /// ```
    public func sessionIDs(where key: String, is value: String) async throws -> [SessionID] {
        try await walk(where: key, is: value, removing: false)
    }

    /// Deletes every session of this namespace whose data holds `value` under `key`, and returns
    /// the IDs of those it deleted. A request of such a session that is still running does not
    /// bring it back (see ``updateSession(_:to:for:)``).
    public func revokeSessions(where key: String, is value: String) async throws -> [SessionID] {
        try await walk(where: key, is: value, removing: true)
    }

    /// The IDs of the live sessions in which `user` is logged in through Vapor's session
    /// authentication (`req.auth.login(user)` with `User.sessionAuthenticator()`, which keeps the
    /// user's `sessionID` in the session data under `_<User>Session`).
    public func sessionIDs<User: SessionAuthenticatable>(of user: User) async throws -> [SessionID] {
        try await sessionIDs(where: Self.authenticationKey(User.self), is: user.sessionID.description)
    }

    /// Deletes every session in which `user` is logged in through Vapor's session authentication,
    /// and returns their IDs: the user is logged out everywhere.
    public func revokeSessions<User: SessionAuthenticatable>(of user: User) async throws -> [SessionID] {
        try await revokeSessions(where: Self.authenticationKey(User.self), is: user.sessionID.description)
    }

    /// The session data key under which Vapor's `Session.authenticate(_:)` keeps a `User`'s ID.
    static func authenticationKey<User>(_: User.Type) -> String { "_\(User.self)Session" }

    /// Walks the store from the start to the end, step by step, picking this namespace's
    /// sessions whose data holds `value` under `key` (and removing them when `removing`).
    private func walk(where key: String, is value: String, removing: Bool) async throws -> [SessionID] {
        let records = try records.get()
        let prefix = records.keys.prefix
        var found: [SessionID] = []
        var cursor: SweepCursor? = .start
        while let from = cursor {
            // Small steps: each decodes the JSON of every session it looks at, under the lock.
            let step = try records.store.sweepStep(from: from, keyLimit: 256) { storeKey, payload in
                guard storeKey.hasPrefix(prefix), let json = try? String(payload: payload),
                    let data = try? JSONDecoder().decode(SessionData.self, from: Data(json.utf8)),
                    data[key] == value
                else { return false }
                found.append(SessionID(string: String(storeKey.dropFirst(prefix.count))))
                return removing
            }
            cursor = step.next
            // A pause between steps lets processes waiting for the lock have it (it is not fair).
            if cursor != nil { try await Task.sleep(for: .milliseconds(1)) }
        }
        return found
    }
}
