// The server bench's app: the same Vapor routes over one of four cache providers, chosen at start.
//
//     ServerBench serve --provider mappedkv|memory|fluent-sqlite|fluent-postgres --dir D \
//         [--postgres-url URL] --env production --hostname 127.0.0.1 --port P
//     ServerBench migrate --yes --provider fluent-sqlite|fluent-postgres --dir D [--postgres-url URL]
//
// --provider, --dir and --postgres-url are this app's; every other argument goes to Vapor's
// commands (serve, migrate). The Fluent providers' table is made by `migrate`, run once before
// the app processes start, so that several processes never race to make it.
//
// Routes (async handlers, the same code for every provider; the value is a small JSON note):
// - GET  /cache/:key        `req.cache.get`: the note, or 404 when the key is absent.
// - POST /cache/:key        `req.cache.set` of the note; run.sh gives each request a new key,
//                           since Fluent's cache can only insert (see the counter).
// - POST /count/:key        read-increment-write through `req.cache`: get an Int, then set it plus
//                           one. Vapor's `Cache` has no increment, so two requests can read the
//                           same value and one update is lost; run.sh counts those. Fluent's set is
//                           an INSERT into a table whose key is unique, so it fails for a key that
//                           exists: for the Fluent providers the write is `set(key, to: nil)` (a
//                           DELETE) and then the `set` (the INSERT), the only replace the `Cache`
//                           protocol offers there. Answers the value written.
// - POST /count-atomic/:key MappedKV only: `MappedKVVaporCache.increment(_:by:expiresIn:)`, which
//                           reads and writes under the directory's lock, across processes.
// - GET  /count/:key        the counter's value (0 when absent).

import Fluent
import FluentPostgresDriver
import FluentSQLiteDriver
import Vapor
import VaporMappedKV

enum Provider: String, CaseIterable {
    case mappedkv, memory
    case fluentSQLite = "fluent-sqlite"
    case fluentPostgres = "fluent-postgres"

    var isFluent: Bool { self == .fluentSQLite || self == .fluentPostgres }
}

/// The cached value: a small JSON object, about the size of a cached response fragment.
struct Note: Content {
    var text: String
    var count: Int
}

let note = Note(text: "a note of about the size of a small cached response fragment", count: 42)

/// This app's own options, taken out of the arguments before Vapor sees them.
struct Options {
    var provider = Provider.mappedkv
    var directory = "/tmp/server-bench"
    var postgresURL = "postgres://bench@127.0.0.1:5432/bench"
    var vaporArguments: [String] = []

    init(_ arguments: [String]) throws {
        var rest = [arguments[0]]
        var index = 1
        func value(_ name: String) throws -> String {
            guard index + 1 < arguments.count else { throw Abort(.badRequest, reason: "\(name) needs a value") }
            index += 1
            return arguments[index]
        }
        while index < arguments.count {
            switch arguments[index] {
            case "--provider":
                let name = try value("--provider")
                guard let provider = Provider(rawValue: name) else {
                    throw Abort(
                        .badRequest,
                        reason: "--provider must be one of \(Provider.allCases.map(\.rawValue).joined(separator: ", "))"
                    )
                }
                self.provider = provider
            case "--dir": directory = try value("--dir")
            case "--postgres-url": postgresURL = try value("--postgres-url")
            default: rest.append(arguments[index])
            }
            index += 1
        }
        vaporArguments = rest
    }
}

let options = try Options(CommandLine.arguments)
var environment = try Environment.detect(arguments: options.vaporArguments)
try LoggingSystem.bootstrap(from: &environment)
let app = try await Application.make(environment)

switch options.provider {
case .mappedkv:
    app.caches.use(.mappedKV(directory: "\(options.directory)/mappedkv"))
case .memory:
    app.caches.use(.memory)
case .fluentSQLite:
    try FileManager.default.createDirectory(atPath: options.directory, withIntermediateDirectories: true)
    app.databases.use(.sqlite(.file("\(options.directory)/cache.sqlite")), as: .sqlite)
    app.migrations.add(CacheEntry.migration)
    app.caches.use(.fluent)
case .fluentPostgres:
    app.databases.use(try .postgres(url: options.postgresURL), as: .psql)
    app.migrations.add(CacheEntry.migration)
    app.caches.use(.fluent)
}

let provider = options.provider

app.get("cache", ":key") { req async throws -> Note in
    guard let found = try await req.cache.get(req.parameters.get("key")!, as: Note.self) else {
        throw Abort(.notFound)
    }
    return found
}

app.post("cache", ":key") { req async throws -> HTTPStatus in
    try await req.cache.set(req.parameters.get("key")!, to: note)
    return .ok
}

app.post("count", ":key") { req async throws -> String in
    let key = req.parameters.get("key")!
    let next = (try await req.cache.get(key, as: Int.self) ?? 0) + 1
    if provider.isFluent {
        try await req.cache.set(key, to: Int?.none)
    }
    try await req.cache.set(key, to: next)
    return String(next)
}

app.post("count-atomic", ":key") { req async throws -> String in
    guard provider == .mappedkv else { throw Abort(.notImplemented) }
    return String(try await atomicIncrement(req))
}

app.get("count", ":key") { req async throws -> String in
    String(try await req.cache.get(req.parameters.get("key")!, as: Int.self) ?? 0)
}

do {
    try await app.execute()
} catch {
    app.logger.report(error: error)
    try? await app.asyncShutdown()
    throw error
}
try await app.asyncShutdown()
