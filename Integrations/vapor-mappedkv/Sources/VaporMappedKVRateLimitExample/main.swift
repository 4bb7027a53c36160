import Vapor
import VaporMappedKV

var environment = try Environment.detect()
try LoggingSystem.bootstrap(from: &environment)
let app = try await Application.make(environment)
let directory = Environment.get("MAPPEDKV_DIRECTORY") ?? "/var/lib/my-app"
app.caches.use(.mappedKV(directory: directory))

// 100 requests a minute per client address on the API routes, counted across every process of
// the app that uses the directory.
let api = app.grouped(MappedKVRateLimitMiddleware(limit: 100, per: .seconds(60)))
api.get("api", "hello") { _ in "hello" }

// 5 login attempts a minute per user name; a request that cannot be counted is refused (503).
let loginLimit = MappedKVRateLimitMiddleware(
    limit: 5, per: .seconds(60), name: "login", whenStoreFails: .refuse
) { req in
    req.query[String.self, at: "user"]
}
app.grouped(loginLimit).post("login") { _ in HTTPStatus.ok }

// A view counter per page, shared by every process.
app.post("pages", ":id", "views") { req async throws -> String in
    guard let cache = req.cache as? MappedKVVaporCache else { throw Abort(.internalServerError) }
    let views = try await cache.increment("views:" + req.parameters.require("id"))
    return String(views)
}
app.get("pages", ":id", "views") { req async throws -> String in
    String(try await req.cache.get("views:" + req.parameters.require("id"), as: Int.self) ?? 0)
}

do {
    try await app.execute()
} catch {
    app.logger.report(error: error)
    try? await app.asyncShutdown()
    throw error
}
try await app.asyncShutdown()
