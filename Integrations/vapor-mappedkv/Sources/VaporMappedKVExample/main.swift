// The complete example app of VaporMappedKV: a Vapor app whose cache and sessions live in one
// MappedKV directory, so that several copies of it on one host (worker processes on their own
// ports) share both, live. The README shows this file; a test runs two copies of it.
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
app.sessions.use(.mappedKV(directory: directory))
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

do {
    try await app.execute()
} catch {
    app.logger.report(error: error)
    try? await app.asyncShutdown()
    throw error
}
try await app.asyncShutdown()
