// The rate-limiting middleware in front of a route: the limit per client and window, the 429 and
// its Retry-After, clients apart, requests it does not count, and what each store-failure policy
// does when the store is closed under it.
//
// Invariant: each test has its own directory; time moves only when the test advances its clock.

import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Testing

@testable import HummingbirdMappedKV

@Suite("Rate limit")
struct RateLimitTests {
    /// Runs `test` against an app whose `/` is limited to `limit` requests per minute per
    /// `?client=` (none: not counted).
    func withApp(
        limit: Int = 3, policy: MappedKVRateLimitMiddleware<BasicRequestContext>.StoreFailurePolicy = .letThrough,
        _ test: @escaping @Sendable (any TestClientProtocol, MappedKVPersistDriver, ManualClock) async throws -> Void
    ) async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let clock = ManualClock()
        let persist = try MappedKVPersistDriver.testing(directory: directory.path, clock: clock)
        let router = Router()
        router.add(
            middleware: MappedKVRateLimitMiddleware(
                persist: persist, limit: limit, window: .seconds(60), onStoreFailure: policy
            ) { request, _ in request.uri.queryParameters.get("client") })
        router.get("/") { _, _ in "ok" }
        try await Application(router: router).test(.router) { client in try await test(client, persist, clock) }
    }

    /// The status and Retry-After header of a GET of `/` for `client`.
    static func get(
        _ client: any TestClientProtocol, _ who: String?
    ) async throws -> (status: HTTPResponse.Status, retryAfter: String?) {
        try await client.execute(uri: who.map { "/?client=\($0)" } ?? "/", method: .get) { response in
            (response.status, response.headers[.retryAfter])
        }
    }

    @Test func aClientOverItsLimitGets429UntilItsWindowEnds() async throws {
        try await withApp { client, persist, clock in
            for _ in 0..<3 { #expect(try await Self.get(client, "ada").status == .ok) }
            let over = try await Self.get(client, "ada")
            #expect(over.status == .tooManyRequests)
            #expect(over.retryAfter == "60")
            clock.advance(by: .milliseconds(30_500))
            let later = try await Self.get(client, "ada")
            #expect(later.status == .tooManyRequests)
            #expect(later.retryAfter == "30")  // 29.5 s, rounded up
            // Another client has a count of its own; a request without a client is not counted.
            #expect(try await Self.get(client, "bob").status == .ok)
            for _ in 0..<5 { #expect(try await Self.get(client, nil).status == .ok) }
            // The count is an ordinary counter under the prefix.
            #expect(try await persist.get(key: "rate-limit:ada", as: Int.self) == 5)
            clock.advance(by: .milliseconds(29_501))
            #expect(try await Self.get(client, "ada").status == .ok)  // a new window
            #expect(try await persist.get(key: "rate-limit:ada", as: Int.self) == 1)
        }
    }

    @Test func aLongClientKeyIsCountedUnderItsHash() async throws {
        // A client key past what the store takes as a key is still counted, never let through.
        let long = String(repeating: "k", count: 20_000)
        try await withApp(policy: .letThrough) { client, persist, _ in
            for _ in 0..<3 {
                let response = try await Self.get(client, long)
                #expect(response.status == .ok)
            }
            let over = try await Self.get(client, long)
            #expect(over.status == .tooManyRequests)
            let key = "rate-limit:" + MappedKVRateLimitMiddleware<BasicRequestContext>.counterKey(of: long)
            #expect(try await persist.get(key: key, as: Int.self) == 4)
        }
    }

    @Test func aCounterOverwrittenByHandIsCountedAfresh() async throws {
        // A value that is not a counter, or a counter set without an expiry, would make the limit
        // fail open or refuse the client for ever: it is replaced by this window's count.
        try await withApp(policy: .refuse) { client, persist, _ in
            try await persist.set(key: "rate-limit:ada", value: "not a number")
            #expect(try await Self.get(client, "ada").status == .ok)
            #expect(try await persist.getWithTTL(key: "rate-limit:ada", as: Int.self)?.object == 1)
            try await persist.set(key: "rate-limit:bob", value: 99)
            #expect(try await Self.get(client, "bob").status == .ok)
            #expect(try await persist.getWithTTL(key: "rate-limit:bob", as: Int.self)?.ttl != nil)
        }
    }

    @Test func aClosedStoreLetsRequestsThroughByDefault() async throws {
        try await withApp(policy: .letThrough) { client, persist, _ in
            try await persist.shutdown()
            for _ in 0..<5 { #expect(try await Self.get(client, "ada").status == .ok) }
        }
    }

    @Test func aClosedStoreRefusesRequestsWith503WhenFailingClosed() async throws {
        try await withApp(policy: .refuse) { client, persist, _ in
            #expect(try await Self.get(client, "ada").status == .ok)
            try await persist.shutdown()
            #expect(try await Self.get(client, "ada").status == .serviceUnavailable)
            #expect(try await Self.get(client, nil).status == .ok)  // not counted, so not refused
        }
    }

    @Test func retryAfterIsWholeSecondsRoundedUpAndAtLeastOne() {
        typealias Middleware = MappedKVRateLimitMiddleware<BasicRequestContext>
        #expect(Middleware.retryAfterSeconds(.seconds(60)) == 60)
        #expect(Middleware.retryAfterSeconds(.milliseconds(59_001)) == 60)
        #expect(Middleware.retryAfterSeconds(.nanoseconds(1)) == 1)
        #expect(Middleware.retryAfterSeconds(.zero) == 1)
    }
}
