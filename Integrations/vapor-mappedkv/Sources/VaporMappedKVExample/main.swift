// The complete example app of VaporMappedKV: a Vapor app whose cache, counters, rate limit and
// sessions live in one MappedKV directory, so that several copies of it on one host (worker
// processes on their own ports) share them, live. The package's tests run copies of it.
//
//     MAPPEDKV_DIRECTORY=/tmp/shared VaporMappedKVExample serve --hostname 127.0.0.1 --port 8080

import Vapor
import VaporMappedKV

/// What the cache routes store.
struct Note: Content, Equatable {
    var text: String
}

/// The body of a login.
struct Login: Content {
    var name: String
}

var environment = try Environment.detect()
try LoggingSystem.bootstrap(from: &environment)
let app = try await Application.make(environment)
let directory = Environment.get("MAPPEDKV_DIRECTORY") ?? "/tmp/vapor-mappedkv-example"
app.caches.use(.mappedKV(directory: directory))
// Sessions last MAPPEDKV_SESSION_LIFETIME seconds after their last use (a week by default); the
// expired ones are removed at start and every MAPPEDKV_TIDY_INTERVAL seconds (an hour by default).
var sessions = MappedKVSessionsConfiguration()
if let seconds = Environment.get("MAPPEDKV_SESSION_LIFETIME").flatMap(Int.init) {
    sessions.lifetime = .seconds(seconds)
}
if let seconds = Environment.get("MAPPEDKV_TIDY_INTERVAL").flatMap(Int.init) {
    sessions.tidyInterval = .seconds(seconds)
}
app.sessions.use(.mappedKV(directory: directory, configuration: sessions))
app.middleware.use(app.sessions.middleware)

// The cache: PUT a note (with ?ttl=SECONDS to make it expire), GET it, DELETE it.
app.put("notes", ":key") { req async throws -> HTTPStatus in
    let key = try req.parameters.require("key")
    let note = try req.content.decode(Note.self)
    let expiry = req.query[Int.self, at: "ttl"].map { CacheExpirationTime.seconds($0) }
    try await req.cache.set(key, to: note, expiresIn: expiry)
    return .noContent
}
app.get("notes", ":key") { req async throws -> Note in
    guard let note = try await req.cache.get(try req.parameters.require("key"), as: Note.self) else {
        throw Abort(.notFound)
    }
    return note
}
app.delete("notes", ":key") { req async throws -> HTTPStatus in
    try await req.cache.delete(try req.parameters.require("key"))
    return .noContent
}
// The same response as a note without the cache, to compare the two routes by hand.
app.get("constant") { _ async in Note(text: "a note of about the size of a small cached response") }

// Counters: POST adds one (or ?by=N) and answers the new count, GET reads it; every copy of the
// app counts into the same counter.
app.post("counters", ":name") { req async throws -> String in
    guard let cache = req.cache as? MappedKVVaporCache else { throw Abort(.internalServerError) }
    let by = req.query[Int.self, at: "by"] ?? 1
    return String(try await cache.increment("counter:" + req.parameters.require("name"), by: by))
}
app.get("counters", ":name") { req async throws -> String in
    String(try await req.cache.get("counter:" + req.parameters.require("name"), as: Int.self) ?? 0)
}

// A rate limit shared by every copy of the app: MAPPEDKV_RATE_LIMIT requests (10 by default) per
// MAPPEDKV_RATE_WINDOW seconds (60 by default) per client address.
let rateLimit = MappedKVRateLimitMiddleware(
    limit: Environment.get("MAPPEDKV_RATE_LIMIT").flatMap(Int.init) ?? 10,
    per: .seconds(Environment.get("MAPPEDKV_RATE_WINDOW").flatMap(Int.init) ?? 60))
app.grouped(rateLimit).get("limited") { _ async in "within the limit" }

// Sessions: log in, ask who is logged in (on any copy of the app), log out.
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

// For the tests only (MAPPEDKV_EXAMPLE_TEST_ROUTES=1): a request that reads the session, says so
// by storing the note "<note>-waiting", and then waits, up to 30 s, until the note it names exists,
// so a test can log out while it runs.
if Environment.get("MAPPEDKV_EXAMPLE_TEST_ROUTES") == "1" {
    app.get("me", "after", ":note") { req async throws -> String in
        let note = try req.parameters.require("note")
        let name = req.session.data["name"] ?? "nobody"
        try await req.cache.set(note + "-waiting", to: Note(text: name))
        let deadline = ContinuousClock.now + .seconds(30)
        while try await req.cache.get(note, as: Note.self) == nil {
            guard ContinuousClock.now < deadline else { throw Abort(.requestTimeout) }
            try await Task.sleep(for: .milliseconds(10))  // polling the note, with a deadline
        }
        return name
    }
}

do {
    try await app.execute()
} catch {
    app.logger.report(error: error)
    try? await app.asyncShutdown()
    throw error
}
try await app.asyncShutdown()
