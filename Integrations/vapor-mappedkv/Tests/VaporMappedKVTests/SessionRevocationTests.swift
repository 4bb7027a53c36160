// Listing and revoking every session of one user: by a key and value of the session data, and by
// a user logged in through Vapor's session authentication; only the driver's namespace is
// touched, and a revoked session's cookie no longer logs anyone in.

import Foundation
import Testing
import Vapor
import VaporTesting

@testable import VaporMappedKV

/// A user that Vapor's session authentication keeps in the session.
private struct Member: SessionAuthenticatable {
    var sessionID: String
}

/// Sessions in `directory`, with routes that log a member in through Vapor's session
/// authentication (`POST /member/:id`) and say who is logged in (`GET /member`).
private func configureMemberRoutes(directory: String) -> (Application) async throws -> Void {
    { app in
        app.sessions.use(.mappedKV(directory: directory))
        let sessions = app.grouped(app.sessions.middleware)
        sessions.post("member", ":id") { req async throws -> HTTPStatus in
            req.session.authenticate(Member(sessionID: try req.parameters.require("id")))
            return .ok
        }
        sessions.get("member") { req async throws -> String in
            guard let id = req.session.authenticated(Member.self) else { throw Abort(.unauthorized) }
            return id
        }
    }
}

/// The app's sessions driver as MappedKV's.
private func driver(_ app: Application) throws -> MappedKVSessions {
    try #require(app.sessions.driver as? MappedKVSessions)
}

@Suite("revoking a user's sessions")
struct SessionRevocationTests {
    @Test("the sessions holding a value are listed and revoked; the others stay")
    func revokeByDataValue() async throws {
        let directory = try TestDirectory()
        defer { directory.remove() }
        try await withSessionApp(directory: directory.path, configuration: MappedKVSessionsConfiguration()) { app in
            let phone = try #require(try await logIn(app, as: "ada"))
            let laptop = try #require(try await logIn(app, as: "ada"))
            let other = try #require(try await logIn(app, as: "grace"))
            let sessions = try driver(app)
            let listed = try await sessions.sessionIDs(where: "name", is: "ada")
            #expect(Set(listed.map(\.string)) == [phone.string, laptop.string])
            let revoked = try await sessions.revokeSessions(where: "name", is: "ada")
            #expect(Set(revoked.map(\.string)) == [phone.string, laptop.string])
            #expect(try await whoAmI(app, cookie: phone).0 == .unauthorized)
            #expect(try await whoAmI(app, cookie: laptop).0 == .unauthorized)
            #expect(try await whoAmI(app, cookie: other) == (.ok, "grace"))
            #expect(try await sessions.sessionIDs(where: "name", is: "ada").isEmpty)
        }
    }

    @Test("another namespace's sessions with the same data are neither listed nor revoked")
    func revokeStaysInItsNamespace() async throws {
        let directory = try TestDirectory()
        defer { directory.remove() }
        let shop = MappedKVSessionsConfiguration(namespace: "shop")
        let blog = MappedKVSessionsConfiguration(namespace: "blog")
        try await withSessionApp(directory: directory.path, configuration: shop) { shopApp in
            try await withSessionApp(directory: directory.path, configuration: blog) { blogApp in
                let inShop = try #require(try await logIn(shopApp, as: "ada"))
                let inBlog = try #require(try await logIn(blogApp, as: "ada"))
                let revoked = try await driver(shopApp).revokeSessions(where: "name", is: "ada")
                #expect(revoked.map(\.string) == [inShop.string])
                #expect(try await whoAmI(blogApp, cookie: inBlog) == (.ok, "ada"))
            }
        }
    }

    @Test("a user logged in through Vapor's session authentication is logged out everywhere")
    func revokeAuthenticatedUser() async throws {
        let directory = try TestDirectory()
        defer { directory.remove() }
        try await withApp(configure: configureMemberRoutes(directory: directory.path)) { app in
            var cookies: [HTTPCookies.Value] = []
            for id in ["7", "7", "8"] {
                let res = try await app.testing().sendRequest(.POST, "member/\(id)")
                cookies.append(try #require(res.headers.setCookie?["vapor-session"]))
            }
            let revoked = try await driver(app).revokeSessions(of: Member(sessionID: "7"))
            #expect(revoked.count == 2)
            for (cookie, expected) in zip(cookies, [HTTPStatus.unauthorized, .unauthorized, .ok]) {
                let res = try await app.testing().sendRequest(.GET, "member") { req in
                    req.headers.cookie = ["vapor-session": cookie]
                }
                #expect(res.status == expected)
            }
            #expect(try await driver(app).sessionIDs(of: Member(sessionID: "8")).count == 1)
        }
    }
}
