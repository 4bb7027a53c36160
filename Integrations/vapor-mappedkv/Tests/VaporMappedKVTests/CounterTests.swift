// The cache's atomic counters and the rate limit built on them, in one process: a counter reads
// back through `get(_:as: Int.self)`, keeps the expiry of its creation, refuses a value that is
// not a counter and a sum past Int's range, leaving the value as it was; the rate limit answers
// 429 with the seconds left in the window, keeps clients apart, lets uncounted requests through,
// and does what it was told when the store fails.

import Foundation
import MappedKVCache
import Synchronization
import Testing
import Vapor
import VaporTesting

@testable import VaporMappedKV

/// Runs `test` on an app whose cache is the MappedKV directory `directory`, read by `clock`, with
/// the route `GET /limited` behind `limit` when one is given.
private func withCounterApp(
    directory: String, clock: ManualClock, limit: MappedKVRateLimitMiddleware? = nil,
    _ test: (Application) async throws -> Void
) async throws {
    var configuration = DiskCacheConfiguration()
    configuration.clock = clock.cacheClock
    try await withApp(
        configure: { app in
            app.caches.use(.mappedKV(directory: directory, configuration: configuration))
            if let limit { app.grouped(limit).get("limited") { _ in "ok" } }
        }, test)
}

/// The app's cache as MappedKV's.
private func counters(_ app: Application) throws -> MappedKVVaporCache {
    try #require(app.cache as? MappedKVVaporCache)
}

@Suite("counters and the rate limit")
struct CounterTests {
    @Test("increments add up, read back as Int, and the future and async forms agree")
    func incrementsReadBack() async throws {
        let directory = try TestDirectory()
        defer { directory.remove() }
        try await withCounterApp(directory: directory.path, clock: ManualClock()) { app in
            let cache = try counters(app)
            #expect(try await cache.increment("visits") == 1)
            #expect(try await cache.increment("visits", by: 41) == 42)
            #expect(try await cache.increment("visits", by: -2).get() == 40)
            #expect(try await app.cache.get("visits", as: Int.self) == 40)
            try await app.cache.set("preset", to: 7)
            #expect(try await cache.increment("preset") == 8)
        }
    }

    @Test("a counter keeps the expiry of its creation, and starts again once it expired")
    func counterWindowIsFixed() async throws {
        let directory = try TestDirectory()
        defer { directory.remove() }
        let clock = ManualClock()
        try await withCounterApp(directory: directory.path, clock: clock) { app in
            let cache = try counters(app)
            #expect(try await cache.increment("window", expiresIn: .seconds(10)) == 1)
            clock.advance(seconds: 6)
            #expect(try await cache.increment("window", expiresIn: .seconds(10)) == 2)
            clock.advance(seconds: 5)
            #expect(try await app.cache.get("window", as: Int.self) == nil)
            #expect(try await cache.increment("window", expiresIn: .seconds(10)) == 1)
        }
    }

    @Test("a value that is not a counter, a sum past Int, and an expiry of zero are clear errors")
    func counterErrors() async throws {
        let directory = try TestDirectory()
        defer { directory.remove() }
        try await withCounterApp(directory: directory.path, clock: ManualClock()) { app in
            let cache = try counters(app)
            try await app.cache.set("name", to: "ada")
            await #expect(throws: MappedKVVaporError.notACounter(key: "name")) {
                _ = try await cache.increment("name")
            }
            #expect(try await app.cache.get("name", as: String.self) == "ada")

            #expect(try await cache.increment("big", by: Int.max - 1) == Int.max - 1)
            await #expect(throws: MappedKVVaporError.counterOverflow(key: "big")) {
                _ = try await cache.increment("big", by: 2)
            }
            #expect(try await app.cache.get("big", as: Int.self) == Int.max - 1)

            await #expect(throws: MappedKVVaporError.counterExpiryNotPositive(key: "brief")) {
                _ = try await cache.increment("brief", expiresIn: .seconds(0))
            }
            #expect(try await app.cache.get("brief", as: Int.self) == nil)
            let message = MappedKVVaporError.notACounter(key: "name").description
            #expect(message.contains("\"name\"") && message.contains("not a counter"))
        }
    }

    @Test("the rate limit answers 429 with the seconds left in the window, per client, and resets")
    func rateLimit() async throws {
        let directory = try TestDirectory()
        defer { directory.remove() }
        let clock = ManualClock()
        // 10 s past the start of a 60 s window.
        let base = (Int(Date().timeIntervalSince1970) / 60 + 1) * 60 + 10
        let offset = Atomic<Int>(0)
        let limit = MappedKVRateLimitMiddleware(
            limit: 3, per: .seconds(60), name: "test", whenStoreFails: .allow,
            clientKey: { $0.headers.first(name: "X-Client") },
            now: { .seconds(base + offset.load(ordering: .relaxed)) })
        try await withCounterApp(
            directory: directory.path, clock: clock,
            limit: limit
        ) { app async throws in
            /// The status code of a request as `client`, and the Retry-After header if any.
            func status(_ client: String?) async throws -> String {
                let res = try await app.testing().sendRequest(.GET, "limited") { req in
                    if let client { req.headers.replaceOrAdd(name: "X-Client", value: client) }
                }
                return "\(res.status.code) \(res.headers.first(name: "Retry-After") ?? "-")"
            }
            for _ in 0..<3 { #expect(try await status("a") == "200 -") }
            #expect(try await status("a") == "429 50")
            #expect(try await status("b") == "200 -")
            for _ in 0..<5 { #expect(try await status(nil) == "200 -") }
            offset.store(49, ordering: .relaxed)
            #expect(try await status("a") == "429 1")
            offset.store(50, ordering: .relaxed)
            #expect(try await status("a") == "200 -")
        }
    }

    @Test("no cache key reaches the rate limit's counters, and a long client key is counted under its hash")
    func rateLimitCountersAreOutOfReach() async throws {
        let directory = try TestDirectory()
        defer { directory.remove() }
        let windowIndex = Int(Date().timeIntervalSince1970) / 60
        let long = String(repeating: "k", count: 20_000)
        let limit = MappedKVRateLimitMiddleware(
            limit: 2, per: .seconds(60), name: "test", whenStoreFails: .allow,
            clientKey: { $0.headers.first(name: "X-Client") == "long" ? long : "a" })
        try await withCounterApp(directory: directory.path, clock: ManualClock(), limit: limit) { app async throws in
            // What the first version counted under: a value there must not switch the limit off.
            for index in windowIndex...(windowIndex + 1) {
                try await app.cache.set("rate-limit/test/\(index)/a", to: ["not": "a counter"])
                try await app.cache.set("test/\(index)/a", to: ["not": "a counter"])
            }
            for client in ["a", "long"] {
                var statuses: [UInt] = []
                for _ in 0..<3 {
                    let res = try await app.testing().sendRequest(.GET, "limited") { req in
                        req.headers.replaceOrAdd(name: "X-Client", value: client)
                    }
                    statuses.append(res.status.code)
                }
                #expect(statuses.prefix(2) == [200, 200] && statuses.last == 429, "\(client): \(statuses)")
            }
        }
    }

    @Test("when the count cannot be kept, the rate limit lets requests through or answers 503, as told")
    func rateLimitStoreFailure() async throws {
        let directory = try TestDirectory()
        defer { directory.remove() }
        let file = directory.path + "/a-file"
        try Data("not a directory".utf8).write(to: URL(fileURLWithPath: file))
        for (policy, expected) in [
            (MappedKVRateLimitMiddleware.StoreFailurePolicy.allow, HTTPStatus.ok), (.refuse, .serviceUnavailable),
        ] {
            let limit = MappedKVRateLimitMiddleware(limit: 1, per: .seconds(60), whenStoreFails: policy) { _ in "c" }
            try await withCounterApp(
                directory: file, clock: ManualClock(),
                limit: limit
            ) { app in
                for _ in 0..<3 {
                    let res = try await app.testing().sendRequest(.GET, "limited")
                    #expect(res.status == expected)
                }
            }
        }
        #expect(MappedKVRateLimitMiddleware(limit: 1, per: .seconds(60)).storeFailurePolicy == .allow)
    }
}
