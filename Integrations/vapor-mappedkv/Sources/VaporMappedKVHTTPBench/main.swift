// The server that bench-http.sh loads with wrk: one cached note read through a route in each of
// Vapor's two handler styles, against the same route returning a constant, and, in the async style,
// against Vapor's own in-memory cache, which shows what awaiting any Vapor `Cache` costs a handler.
//
//     MAPPEDKV_DIRECTORY=/tmp/bench VaporMappedKVHTTPBench serve --env production --port 8080
//
// Routes, each answering the same JSON body:
// - `GET /future/constant`, `GET /future/mappedkv`: `EventLoopFuture` handlers; the cache's future is
//   completed on the request's event loop, so the read needs no thread hop.
// - `GET /async/constant`, `GET /async/mappedkv`, `GET /async/memory`: `async` handlers; awaiting a
//   `Cache` future from one hops to the request's event loop and back, whatever the cache.

import Vapor
import VaporMappedKV

/// The cached response.
struct Note: Content, Equatable {
    var text: String
}

let note = Note(text: "a note of about the size of a small cached response")
let key = "bench"

var environment = try Environment.detect()
try LoggingSystem.bootstrap(from: &environment)
let app = try await Application.make(environment)
let directory = Environment.get("MAPPEDKV_DIRECTORY") ?? "/tmp/vapor-mappedkv-http-bench"
app.caches.use(.mappedKV(directory: directory))
try await app.cache.set(key, to: note).get()
try await app.caches.memory.set(key, to: note).get()

app.get("future", "constant") { req -> EventLoopFuture<Note> in
    req.eventLoop.makeSucceededFuture(note)
}
app.get("future", "mappedkv") { req -> EventLoopFuture<Note> in
    req.cache.get(key, as: Note.self).unwrap(or: Abort(.notFound))
}
app.get("async", "constant") { _ async -> Note in note }
app.get("async", "mappedkv") { req async throws -> Note in
    guard let found = try await req.cache.get(key, as: Note.self) else { throw Abort(.notFound) }
    return found
}
app.get("async", "memory") { req async throws -> Note in
    guard let found = try await req.application.caches.memory.for(req).get(key, as: Note.self) else {
        throw Abort(.notFound)
    }
    return found
}

do {
    try await app.execute()
} catch {
    app.logger.report(error: error)
    try? await app.asyncShutdown()
    throw error
}
try await app.asyncShutdown()
