// A complete Hummingbird app whose worker processes share one state through MappedKVPersistDriver:
// start it several times on one directory (each on its own port, or behind one load balancer) and
// a value one process stores is read by all of them, with its expiry; so are sessions, counters
// and rate limits.
//
//   HummingbirdMappedKVExample --directory /tmp/kv --port 8080 [--namespace app]
//       [--tidy-frequency SECONDS] [--log-level debug]
//   curl -X PUT --data 'hello' 'localhost:8080/kv/greeting?ttl=60'   # ttl in seconds, optional
//   curl localhost:8080/kv/greeting                                  # from any process: hello
//   curl -X POST 'localhost:8080/count/visits?ttl=60'                # the new count, from all processes
//   curl -c jar -X POST 'localhost:8080/session/login?name=ada'      # a session cookie...
//   curl -b jar localhost:8080/session/me                            # ...any process knows: ada
//   curl 'localhost:8080/limited?client=me'                          # 5 a minute per client, then 429
//
// Invariant: the app never crashes on bad input: a bad port, key or value is an error message or
// an HTTP 400, a duplicate create or a key that is not a counter a 409.

import Foundation
import Hummingbird
import HummingbirdAuth
import HummingbirdMappedKV
import Logging
import MappedKV

/// The command line: `--directory DIR`, `--hostname HOST`, `--port N` (0 picks a free port),
/// `--namespace NS` (none by default), `--tidy-frequency SECONDS` (600 by default) and
/// `--log-level LEVEL` of the driver's log on standard output (none by default).
struct Options {
    var directory = FileManager.default.temporaryDirectory.appendingPathComponent("hummingbird-mappedkv").path
    var hostname = "127.0.0.1"
    var port = 8080
    var namespace: String?
    var tidyFrequency = Duration.seconds(600)
    var logLevel: Logger.Level?

    init(arguments: [String]) throws {
        var remaining = arguments.makeIterator()
        while let option = remaining.next() {
            guard let value = remaining.next() else { throw HTTPError(.badRequest, message: "\(option) needs a value") }
            switch option {
            case "--directory": directory = value
            case "--hostname": hostname = value
            case "--namespace": namespace = value
            case "--tidy-frequency":
                guard let seconds = Double(value), seconds > 0, seconds < 1e9 else {
                    throw HTTPError(.badRequest, message: "--tidy-frequency takes seconds above 0, not \(value)")
                }
                tidyFrequency = .milliseconds(Int64(seconds * 1000))
            case "--log-level":
                guard let level = Logger.Level(rawValue: value) else {
                    throw HTTPError(.badRequest, message: "--log-level takes trace, debug, info..., not \(value)")
                }
                logLevel = level
            case "--port":
                guard let port = Int(value), (0...65535).contains(port) else {
                    throw HTTPError(.badRequest, message: "--port takes 0 to 65535, not \(value)")
                }
                self.port = port
            default: throw HTTPError(.badRequest, message: "unknown option \(option)")
            }
        }
    }
}

/// Runs `body`, turning the driver's refusals into HTTP errors the client can act on.
func answering<T>(_ body: () async throws -> T) async throws -> T {
    do {
        return try await body()
    } catch let error as PersistError where error == .duplicate {
        throw HTTPError(.conflict, message: "the key holds a value already")
    } catch let error as PersistError where error == .invalidConversion {
        throw HTTPError(.badRequest, message: "the key holds a value of another type")
    } catch let error as MappedKVPersistError {
        throw HTTPError(.conflict, message: error.description)
    } catch let error as MappedKVError {
        throw HTTPError(.badRequest, message: error.description)
    }
}

let options = try Options(arguments: Array(CommandLine.arguments.dropFirst()))
/// The driver's log: standard output at the level asked for, or nowhere.
let persistLogger = options.logLevel.map { level in
    var logger = Logger(label: "persist")
    logger.logLevel = level
    return logger
}
let persist = try MappedKVPersistDriver(
    directory: options.directory,
    configuration: .init(tidyFrequency: options.tidyFrequency, namespace: options.namespace),
    logger: persistLogger)
/// Requests carry a session (the signed-in name) when they come through the session routes.
typealias Context = BasicSessionRequestContext<String, String>
let router = Router(context: Context.self)
router.get("/constant") { _, _ in "hello, world" }
router.get("/kv/:key") { _, context -> String? in
    let key = try context.parameters.require("key")
    return try await answering { try await persist.get(key: key, as: String.self) }
}
router.get("/kv/:key/ttl") { _, context -> String? in
    let key = try context.parameters.require("key")
    let found = try await answering { try await persist.getWithTTL(key: key, as: String.self) }
    return found.map { $0.ttl.map { "\($0.components.seconds)" } ?? "none" }
}
router.put("/kv/:key") { request, context -> HTTPResponse.Status in
    let key = try context.parameters.require("key")
    let value = String(buffer: try await request.body.collect(upTo: 1 << 20))
    let expires = request.uri.queryParameters.get("ttl", as: Int.self).map { Duration.seconds($0) }
    try await answering { try await persist.set(key: key, value: value, expires: expires) }
    return .ok
}
router.post("/kv/:key") { request, context -> HTTPResponse.Status in
    let key = try context.parameters.require("key")
    let value = String(buffer: try await request.body.collect(upTo: 1 << 20))
    let expires = request.uri.queryParameters.get("ttl", as: Int.self).map { Duration.seconds($0) }
    try await answering { try await persist.create(key: key, value: value, expires: expires) }
    return .created
}
router.delete("/kv/:key") { _, context -> HTTPResponse.Status in
    let key = try context.parameters.require("key")
    try await answering { try await persist.remove(key: key) }
    return .noContent
}

// Counters: every process adds to the same count.
router.post("/count/:key") { request, context -> String in
    let key = try context.parameters.require("key")
    let delta = request.uri.queryParameters.get("by", as: Int.self) ?? 1
    let expires = request.uri.queryParameters.get("ttl", as: Int.self).map { Duration.seconds($0) }
    return String(try await answering { try await persist.increment(key: key, by: delta, expires: expires) })
}

// Sessions: signed in through one process, known to all of them.
let sessions = router.group("session").add(middleware: SessionMiddleware(storage: persist))
sessions.post("login") { request, context -> String in
    guard let name = request.uri.queryParameters.get("name") else { throw HTTPError(.badRequest) }
    context.sessions.setSession(name, expiresIn: .seconds(600))
    return name
}
sessions.get("me") { _, context -> String in
    guard let name = context.sessions.session else { throw HTTPError(.unauthorized) }
    return name
}
sessions.post("logout") { _, context -> HTTPResponse.Status in
    context.sessions.clearSession()
    return .noContent
}

// A rate limit: 5 requests a minute per client, counted across all processes.
router.group("limited")
    .add(
        middleware: MappedKVRateLimitMiddleware(persist: persist, limit: 5, window: .seconds(60)) { request, _ in
            request.uri.queryParameters.get("client")
        }
    )
    .get { _, _ in "within the limit" }

let app = Application(
    router: router,
    configuration: ApplicationConfiguration(address: .hostname(options.hostname, port: options.port)),
    services: [persist],  // its run() removes expired entries until the app shuts down
    onServerRunning: { channel in
        // The bound port, for scripts and tests that start the app on port 0.
        let port = channel.localAddress?.port ?? options.port
        FileHandle.standardOutput.write(Data("listening on \(options.hostname):\(port)\n".utf8))
    }
)
try await app.runService()
