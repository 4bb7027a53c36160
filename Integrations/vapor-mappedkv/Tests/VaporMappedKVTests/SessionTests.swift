// The sessions driver over a MappedKV directory, tested through Vapor's sessions middleware with
// VaporTesting: a session made by one request is found by the next through its cookie, an unknown
// cookie gets a new session (as in Vapor's own session tests), a destroyed session is gone, an idle
// session expires after its lifetime while a used one slides forward, and bad stored data is an
// error for the request.

import Foundation
import MappedKV
import Testing
import Vapor
import VaporTesting

@testable import VaporMappedKV

/// The body of a login.
struct Login: Content {
    var name: String
}

/// Routes over `req.session`: log in, ask who is logged in, log out.
func registerSessionRoutes(_ app: Application) {
    app.middleware.use(app.sessions.middleware)
    app.post("login") { req async throws -> HTTPStatus in
        req.session.data["name"] = try req.content.decode(Login.self).name
        return .ok
    }
    app.get("me") { req async throws -> String in
        guard let name = req.session.data["name"] else { throw Abort(.unauthorized) }
        return name
    }
    app.post("logout") { req async -> HTTPStatus in
        req.session.destroy()
        return .ok
    }
}

/// Runs `test` on an app whose sessions live in `directory`, lasting `lifetime`, with the routes.
func withSessionApp(
    directory: String, lifetime: Duration = MappedKVSessions.defaultLifetime, clock: ManualClock? = nil,
    _ test: (Application) async throws -> Void
) async throws {
    var configuration = MappedKVSessionsConfiguration(lifetime: lifetime)
    if let clock { configuration.clock = clock.expiryClock }
    try await withApp(
        configure: { app in
            app.sessions.use(.mappedKV(directory: directory, configuration: configuration))
            registerSessionRoutes(app)
        }, test)
}

/// Logs in as `name` and returns the session cookie the response sets.
func logIn(_ app: Application, as name: String) async throws -> HTTPCookies.Value? {
    let res = try await app.testing().sendRequest(.POST, "login") { req in
        try req.content.encode(Login(name: name))
    }
    #expect(res.status == .ok)
    return res.headers.setCookie?["vapor-session"]
}

/// Asks `/me` with `cookie` and returns the status and the body.
func whoAmI(_ app: Application, cookie: HTTPCookies.Value?) async throws -> (HTTPStatus, String) {
    let res = try await app.testing().sendRequest(.GET, "me") { req in
        if let cookie { req.headers.cookie = ["vapor-session": cookie] }
    }
    return (res.status, res.body.string)
}

@Suite("Vapor sessions over MappedKV")
struct SessionTests {
    @Test("a session made by one request is found by the next through its cookie")
    func sessionPersistsAcrossRequests() async throws {
        let directory = try TestDirectory()
        defer { directory.remove() }
        try await withSessionApp(directory: directory.path) { app in
            #expect(try await whoAmI(app, cookie: nil).0 == .unauthorized)
            let cookie = try #require(try await logIn(app, as: "ada"))
            #expect(!cookie.string.isEmpty)
            #expect(try await whoAmI(app, cookie: cookie) == (.ok, "ada"))
            #expect(try await whoAmI(app, cookie: cookie) == (.ok, "ada"))
        }
    }

    @Test("an unknown cookie gets a new session under a new ID")
    func unknownCookieGetsNewSession() async throws {
        let directory = try TestDirectory()
        defer { directory.remove() }
        try await withSessionApp(directory: directory.path) { app in
            var fresh: HTTPCookies.Value?
            try await app.testing().test(
                .POST, "login",
                beforeRequest: { req in
                    req.headers.cookie = ["vapor-session": "made-up"]
                    try req.content.encode(Login(name: "grace"))
                }
            ) { res in
                fresh = res.headers.setCookie?["vapor-session"]
            }
            let cookie = try #require(fresh)
            #expect(cookie.string != "made-up")
            #expect(try await whoAmI(app, cookie: cookie) == (.ok, "grace"))
        }
    }

    @Test("a destroyed session is removed from the directory and its cookie expired")
    func destroyedSessionIsGone() async throws {
        let directory = try TestDirectory()
        defer { directory.remove() }
        try await withSessionApp(directory: directory.path) { app in
            let cookie = try #require(try await logIn(app, as: "alan"))
            try await app.testing().test(
                .POST, "logout", beforeRequest: { req in req.headers.cookie = ["vapor-session": cookie] }
            ) { res in
                #expect(res.status == .ok)
                #expect(res.headers.setCookie?["vapor-session"]?.expires.map { $0 < Date() } == true)
            }
            #expect(try await whoAmI(app, cookie: cookie).0 == .unauthorized)
            let request = Request(application: app, on: app.eventLoopGroup.any())
            let stored = try await app.sessions.driver.readSession(SessionID(string: cookie.string), for: request).get()
            #expect(stored == nil)
        }
    }

    @Test("an idle session expires after its lifetime; each request that uses it starts it again")
    func sessionExpiry() async throws {
        let directory = try TestDirectory()
        defer { directory.remove() }
        let clock = ManualClock()
        try await withSessionApp(directory: directory.path, lifetime: .seconds(60), clock: clock) { app in
            let cookie = try #require(try await logIn(app, as: "barbara"))
            clock.advance(seconds: 40)
            #expect(try await whoAmI(app, cookie: cookie) == (.ok, "barbara"))
            clock.advance(seconds: 40)
            #expect(try await whoAmI(app, cookie: cookie) == (.ok, "barbara"))
            clock.advance(seconds: 61)
            #expect(try await whoAmI(app, cookie: cookie).0 == .unauthorized)
        }
    }

    @Test("the driver's create, read, update and delete, called directly")
    func driverOperations() async throws {
        let directory = try TestDirectory()
        defer { directory.remove() }
        try await withSessionApp(directory: directory.path) { app in
            let driver = app.sessions.driver
            let request = Request(application: app, on: app.eventLoopGroup.any())
            let id = try await driver.createSession(["role": "admin"], for: request).get()
            let other = try await driver.createSession(["role": "admin"], for: request).get()
            #expect(id != other)
            #expect(id.string.count == 43)
            #expect(try await driver.readSession(id, for: request).get() == ["role": "admin"])
            #expect(try await driver.updateSession(id, to: ["role": "reader"], for: request).get() == id)
            #expect(try await driver.readSession(id, for: request).get() == ["role": "reader"])
            try await driver.deleteSession(id, for: request).get()
            #expect(try await driver.readSession(id, for: request).get() == nil)
            #expect(try await driver.readSession(other, for: request).get() == ["role": "admin"])
        }
    }

    @Test("a session entry that is not session data is an error for the request, not a crash")
    func damagedSessionData() async throws {
        let directory = try TestDirectory()
        defer { directory.remove() }
        let store = try SessionRecords.openStore(
            directory: directory.path, configuration: MappedKVSessionsConfiguration(), logger: MappedKV.silentLogger)
        defer { store.close() }
        try store.set("[1, 2, 3]", forKey: "session/damaged", expiresAfter: .seconds(60))
        try await withSessionApp(directory: directory.path) { app in
            let request = Request(application: app, on: app.eventLoopGroup.any())
            await #expect(throws: MappedKVVaporError.self) {
                _ = try await app.sessions.driver.readSession(SessionID(string: "damaged"), for: request).get()
            }
            let (status, _) = try await whoAmI(app, cookie: HTTPCookies.Value(string: "damaged"))
            #expect(status == .internalServerError)
        }
    }

    @Test("the cache and the sessions of one directory keep their entries apart")
    func cacheAndSessionsShareADirectory() async throws {
        let directory = try TestDirectory()
        defer { directory.remove() }
        let configure: (Application) async throws -> Void = { app in
            app.caches.use(.mappedKV(directory: directory.path))
            app.sessions.use(.mappedKV(directory: directory.path))
            registerSessionRoutes(app)
        }
        try await withApp(configure: configure) { app in
            let cookie = try #require(try await logIn(app, as: "edsger"))
            #expect(try await app.cache.get(cookie.string, as: SessionData.self) == nil)
            try await app.cache.set(cookie.string, to: SessionData(initialData: ["name": "mallory"]))
            #expect(try await whoAmI(app, cookie: cookie) == (.ok, "edsger"))
        }
    }
}
