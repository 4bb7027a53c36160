// Vapor's cache over a MappedKV directory, tested the framework's way: routes over `req.cache`
// driven by VaporTesting, plus the direct `app.cache` calls Vapor's own memory cache tests make
// (get of a missing key, set then get, expiry, delete), the future forms, and bad input.

import Foundation
import MappedKVCache
import Testing
import Vapor
import VaporTesting

@testable import VaporMappedKV

/// The value the routes store.
private struct Note: Content, Equatable {
    var text: String
}

/// Routes over `req.cache`: PUT (with ?ttl=SECONDS), GET as a note, GET as an integer, DELETE.
private func registerCacheRoutes(_ app: Application) {
    app.put("cache", ":key") { req async throws -> HTTPStatus in
        let expiry = req.query[Int.self, at: "ttl"].map { CacheExpirationTime.seconds($0) }
        let note = try req.content.decode(Note.self)
        try await req.cache.set(try req.parameters.require("key"), to: note, expiresIn: expiry)
        return .noContent
    }
    app.get("cache", ":key") { req async throws -> Note in
        guard let note = try await req.cache.get(try req.parameters.require("key"), as: Note.self) else {
            throw Abort(.notFound)
        }
        return note
    }
    app.get("cache", ":key", "as-int") { req async throws -> String in
        let number = try await req.cache.get(try req.parameters.require("key"), as: Int.self)
        return number.map(String.init) ?? "none"
    }
    app.delete("cache", ":key") { req async throws -> HTTPStatus in
        try await req.cache.delete(try req.parameters.require("key"))
        return .noContent
    }
}

/// Runs `test` on an app whose cache is the MappedKV directory `directory`, with the cache routes.
private func withCacheApp(
    directory: String, clock: ManualClock? = nil, _ test: (Application) async throws -> Void
) async throws {
    var configuration = DiskCacheConfiguration()
    if let clock { configuration.clock = clock.cacheClock }
    try await withApp(
        configure: { app in
            app.caches.use(.mappedKV(directory: directory, configuration: configuration))
            registerCacheRoutes(app)
        }, test)
}

@Suite("Vapor cache over MappedKV")
struct CacheTests {
    @Test("a route sets a note and another route reads it back; a missing key is a 404")
    func setThenGetThroughRoutes() async throws {
        let directory = try TestDirectory()
        defer { directory.remove() }
        try await withCacheApp(directory: directory.path) { app in
            try await app.testing().test(.GET, "cache/greeting") { res in
                #expect(res.status == .notFound)
            }
            try await app.testing().test(
                .PUT, "cache/greeting", beforeRequest: { req in try req.content.encode(Note(text: "hello")) }
            ) { res in
                #expect(res.status == .noContent)
            }
            try await app.testing().test(.GET, "cache/greeting") { res in
                #expect(res.status == .ok)
                let note = try res.content.decode(Note.self)
                #expect(note == Note(text: "hello"))
            }
            try await app.testing().test(
                .PUT, "cache/greeting", beforeRequest: { req in try req.content.encode(Note(text: "replaced")) }
            ) { res in
                #expect(res.status == .noContent)
            }
            try await app.testing().test(.GET, "cache/greeting") { res in
                let note = try res.content.decode(Note.self)
                #expect(note == Note(text: "replaced"))
            }
        }
    }

    @Test("a note set with an expiry is read until it expires, then is a 404")
    func expiryThroughRoutes() async throws {
        let directory = try TestDirectory()
        defer { directory.remove() }
        let clock = ManualClock()
        try await withCacheApp(directory: directory.path, clock: clock) { app in
            try await app.testing().test(
                .PUT, "cache/short?ttl=2", beforeRequest: { req in try req.content.encode(Note(text: "brief")) }
            ) { res in
                #expect(res.status == .noContent)
            }
            clock.advance(seconds: 1)
            try await app.testing().test(.GET, "cache/short") { res in
                #expect(res.status == .ok)
            }
            clock.advance(seconds: 2)
            try await app.testing().test(.GET, "cache/short") { res in
                #expect(res.status == .notFound)
            }
        }
    }

    @Test("a deleted note is a 404, and deleting a missing key succeeds")
    func deleteThroughRoutes() async throws {
        let directory = try TestDirectory()
        defer { directory.remove() }
        try await withCacheApp(directory: directory.path) { app in
            try await app.testing().test(
                .PUT, "cache/gone", beforeRequest: { req in try req.content.encode(Note(text: "soon gone")) }
            ) { res in
                #expect(res.status == .noContent)
            }
            try await app.testing().test(.DELETE, "cache/gone") { res in
                #expect(res.status == .noContent)
            }
            try await app.testing().test(.GET, "cache/gone") { res in
                #expect(res.status == .notFound)
            }
            try await app.testing().test(.DELETE, "cache/never-there") { res in
                #expect(res.status == .noContent)
            }
        }
    }

    @Test("reading a note as an integer is a clear error for the request, and the note stays")
    func wrongTypeThroughRoutes() async throws {
        let directory = try TestDirectory()
        defer { directory.remove() }
        try await withCacheApp(directory: directory.path) { app in
            try await app.testing().test(
                .PUT, "cache/typed", beforeRequest: { req in try req.content.encode(Note(text: "not a number")) }
            ) { res in
                #expect(res.status == .noContent)
            }
            try await app.testing().test(.GET, "cache/typed/as-int") { res in
                #expect(res.status == .internalServerError)
                #expect(res.body.string.contains("does not decode as Swift.Int"))
            }
            try await app.testing().test(.GET, "cache/typed") { res in
                let note = try res.content.decode(Note.self)
                #expect(note == Note(text: "not a number"))
            }
        }
    }

    @Test("app.cache: the calls of Vapor's memory cache test, in their async forms")
    func asyncFormsLikeVaporsOwnTest() async throws {
        let directory = try TestDirectory()
        defer { directory.remove() }
        let clock = ManualClock()
        try await withCacheApp(directory: directory.path, clock: clock) { app in
            #expect(try await app.cache.get("foo", as: String.self) == nil)
            try await app.cache.set("foo", to: "bar")
            #expect(try await app.cache.get("foo") == "bar")

            try await app.cache.set("foo2", to: "bar2", expiresIn: .seconds(1))
            #expect(try await app.cache.get("foo2") == "bar2")
            clock.advance(seconds: 2)
            #expect(try await app.cache.get("foo2", as: String.self) == nil)

            try await app.cache.set("foo3", to: "bar3")
            #expect(try await app.cache.get("foo3") == "bar3")
            try await app.cache.delete("foo3")
            #expect(try await app.cache.get("foo3", as: String.self) == nil)

            try await app.cache.set("foo", to: String?.none)
            #expect(try await app.cache.get("foo", as: String.self) == nil)
        }
    }

    @Test("app.cache: the future forms give the same answers")
    func futureForms() async throws {
        let directory = try TestDirectory()
        defer { directory.remove() }
        try await withCacheApp(directory: directory.path) { app in
            let cache = app.cache
            try await cache.set("count", to: 41).get()
            #expect(try await cache.get("count", as: Int.self).get() == 41)
            try await cache.set("count", to: 42, expiresIn: .minutes(5)).get()
            #expect(try await cache.get("count", as: Int.self).get() == 42)
            try await cache.delete("count").get()
            #expect(try await cache.get("count", as: Int.self).get() == nil)
        }
    }

    @Test("a lifetime of zero or less removes the key, and one too long to count never overflows")
    func lifetimeEdges() async throws {
        let directory = try TestDirectory()
        defer { directory.remove() }
        try await withCacheApp(directory: directory.path) { app in
            try await app.cache.set("edge", to: "kept")
            try await app.cache.set("edge", to: "expired at once", expiresIn: .seconds(0))
            #expect(try await app.cache.get("edge", as: String.self) == nil)
            try await app.cache.set("edge", to: "kept")
            try await app.cache.set("edge", to: "expired before", expiresIn: .hours(-3))
            #expect(try await app.cache.get("edge", as: String.self) == nil)
            try await app.cache.set("edge", to: "forever", expiresIn: .days(Int.max))
            #expect(try await app.cache.get("edge", as: String.self) == "forever")
        }
        #expect(EntryLifetime(.days(Int.max)) == .lasting(.seconds(Int.max)))
        #expect(EntryLifetime(.minutes(2)) == .lasting(.seconds(120)))
    }

    @Test("an oversized key and an unusable directory are errors, not crashes")
    func badInput() async throws {
        let directory = try TestDirectory()
        defer { directory.remove() }
        try await withCacheApp(directory: directory.path) { app in
            let longKey = String(repeating: "k", count: 20_000)
            await #expect(throws: CacheError.self) { try await app.cache.set(longKey, to: "value") }
            await #expect(throws: CacheError.self) { _ = try await app.cache.get(longKey, as: String.self) }
        }
        let file = directory.path + "/a-file"
        try Data("not a directory".utf8).write(to: URL(fileURLWithPath: file))
        try await withCacheApp(directory: file) { app in
            let error = await #expect(throws: MappedKVVaporError.self) {
                try await app.cache.set("key", to: "value")
            }
            guard case .directoryUnavailable(let path, _) = error else {
                Issue.record("expected directoryUnavailable, got \(String(describing: error))")
                return
            }
            #expect(path == file)
        }
        #expect(try String(contentsOfFile: file, encoding: .utf8) == "not a directory")
    }

    @Test("two apps on one directory share the cache, which keeps apart from other users of the directory")
    func twoAppsShareOneDirectory() async throws {
        let directory = try TestDirectory()
        defer { directory.remove() }
        try await withCacheApp(directory: directory.path) { writer in
            try await withCacheApp(directory: directory.path) { reader in
                try await writer.cache.set("shared", to: Note(text: "from the writer"))
                #expect(try await reader.cache.get("shared", as: Note.self) == Note(text: "from the writer"))
                try await reader.cache.delete("shared")
                #expect(try await writer.cache.get("shared", as: Note.self) == nil)
            }
        }
        let disk = try DiskCache(directory: directory.path)
        defer { disk.close() }
        try disk.set(Array(#"{"text":"raw"}"#.utf8), forKey: "shared")
        try await withCacheApp(directory: directory.path) { app in
            let found = try await app.cache.get("shared", as: Note.self)
            #expect(found == nil)
        }
    }
}
