// Every behaviour Hummingbird's own persist tests check for its memory, Valkey and Postgres drivers,
// through routes of an application driven by HummingbirdTesting, with MappedKVPersistDriver under
// them: set/get, create/get, double create, set twice, expiry, time to live, Codable values, get as
// the wrong type, remove, expire then add, and tidying while the app runs.
//
// Invariant: each test has its own directory, and time moves only when the test advances its
// clock, so expiry is tested without sleeping.

import Foundation
import Hummingbird
import HummingbirdTesting
import Testing

@testable import HummingbirdMappedKV

@Suite("Persist routes")
struct PersistRouteTests {
    /// A value with more than one field, as Hummingbird's tests use.
    struct TestCodable: Codable, Sendable {
        let buffer: String
    }

    /// The routes of Hummingbird's persist tests over `persist`.
    func makeRouter(_ persist: MappedKVPersistDriver) -> Router<BasicRequestContext> {
        let router = Router()
        router.put("/persist/:tag") { request, context -> HTTPResponse.Status in
            let buffer = try await request.body.collect(upTo: .max)
            try await persist.set(key: try context.parameters.require("tag"), value: String(buffer: buffer))
            return .ok
        }
        router.put("/persist/:tag/:time") { request, context -> HTTPResponse.Status in
            guard let time = context.parameters.get("time", as: Int.self) else { throw HTTPError(.badRequest) }
            let buffer = try await request.body.collect(upTo: .max)
            let tag = try context.parameters.require("tag")
            try await persist.set(key: tag, value: String(buffer: buffer), expires: .seconds(time))
            return .ok
        }
        router.get("/persist/:tag") { _, context -> String? in
            try await persist.get(key: try context.parameters.require("tag"), as: String.self)
        }
        router.get("/persist/:tag/ttl") { _, context -> String? in
            let found = try await persist.getWithTTL(key: try context.parameters.require("tag"), as: String.self)
            return found?.ttl.map { String($0.components.seconds) }
        }
        router.delete("/persist/:tag") { _, context -> HTTPResponse.Status in
            try await persist.remove(key: try context.parameters.require("tag"))
            return .noContent
        }
        router.put("/create/:tag") { request, context -> HTTPResponse.Status in
            let buffer = try await request.body.collect(upTo: .max)
            do {
                try await persist.create(key: try context.parameters.require("tag"), value: String(buffer: buffer))
            } catch let error as PersistError where error == .duplicate {
                throw HTTPError(.conflict)
            }
            return .ok
        }
        router.put("/codable/:tag") { request, context -> HTTPResponse.Status in
            let buffer = try await request.body.collect(upTo: .max)
            let value = TestCodable(buffer: String(buffer: buffer))
            try await persist.set(key: try context.parameters.require("tag"), value: value)
            return .ok
        }
        router.get("/codable/:tag") { _, context -> String? in
            try await persist.get(key: try context.parameters.require("tag"), as: TestCodable.self)?.buffer
        }
        router.get("/string/:tag") { _, context -> String? in
            do {
                return try await persist.get(key: try context.parameters.require("tag"), as: String.self)
            } catch let error as PersistError where error == .invalidConversion {
                throw HTTPError(.badRequest)
            }
        }
        return router
    }

    /// Runs `test` against an app over a fresh driver whose time is `clock`'s.
    func withApp(
        clock: ManualClock = ManualClock(),
        configuration: MappedKVPersistDriver.Configuration = .init(),
        runsDriver: Bool = false,
        _ test: @escaping @Sendable (any TestClientProtocol, MappedKVPersistDriver) async throws -> Void
    ) async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let persist = try MappedKVPersistDriver.testing(
            directory: directory.path, clock: clock, configuration: configuration)
        let app = Application(router: makeRouter(persist), services: runsDriver ? [persist] : [])
        try await app.test(.router) { client in try await test(client, persist) }
    }

    static func body(_ text: String) -> ByteBuffer { ByteBuffer(string: text) }

    @Test func setThenGet() async throws {
        try await withApp { client, _ in
            try await client.execute(uri: "/persist/a", method: .put, body: Self.body("Persist")) { response in
                #expect(response.status == .ok)
            }
            try await client.execute(uri: "/persist/a", method: .get) { response in
                #expect(String(buffer: response.body) == "Persist")
            }
        }
    }

    @Test func createThenGet() async throws {
        try await withApp { client, _ in
            try await client.execute(uri: "/create/a", method: .put, body: Self.body("Persist")) { response in
                #expect(response.status == .ok)
            }
            try await client.execute(uri: "/persist/a", method: .get) { response in
                #expect(String(buffer: response.body) == "Persist")
            }
        }
    }

    @Test func doubleCreateFails() async throws {
        try await withApp { client, _ in
            try await client.execute(uri: "/create/a", method: .put, body: Self.body("first")) { response in
                #expect(response.status == .ok)
            }
            try await client.execute(uri: "/create/a", method: .put, body: Self.body("second")) { response in
                #expect(response.status == .conflict)
            }
            try await client.execute(uri: "/persist/a", method: .get) { response in
                #expect(String(buffer: response.body) == "first")
            }
        }
    }

    @Test func setTwice() async throws {
        try await withApp { client, _ in
            try await client.execute(uri: "/persist/a", method: .put, body: Self.body("test1")) { _ in }
            try await client.execute(uri: "/persist/a", method: .put, body: Self.body("test2")) { response in
                #expect(response.status == .ok)
            }
            try await client.execute(uri: "/persist/a", method: .get) { response in
                #expect(String(buffer: response.body) == "test2")
            }
        }
    }

    @Test func expires() async throws {
        let clock = ManualClock()
        try await withApp(clock: clock) { client, _ in
            try await client.execute(uri: "/persist/a/0", method: .put, body: Self.body("ThisIsTest1")) { _ in }
            try await client.execute(uri: "/persist/b/10", method: .put, body: Self.body("ThisIsTest2")) { _ in }
            clock.advance(by: .seconds(1))
            try await client.execute(uri: "/persist/a", method: .get) { response in
                #expect(response.status == .noContent)
            }
            try await client.execute(uri: "/persist/b", method: .get) { response in
                #expect(String(buffer: response.body) == "ThisIsTest2")
            }
            clock.advance(by: .seconds(9) + .milliseconds(1))
            try await client.execute(uri: "/persist/b", method: .get) { response in
                #expect(response.status == .noContent)
            }
        }
    }

    @Test func timeToLive() async throws {
        let clock = ManualClock()
        try await withApp(clock: clock) { client, _ in
            try await client.execute(uri: "/persist/a/10", method: .put, body: Self.body("ThisIsTest2")) { _ in }
            try await client.execute(uri: "/persist/a/ttl", method: .get) { response in
                #expect(String(buffer: response.body) == "10")
            }
            clock.advance(by: .seconds(3))
            try await client.execute(uri: "/persist/a/ttl", method: .get) { response in
                #expect(String(buffer: response.body) == "7")
            }
            try await client.execute(uri: "/persist/forever", method: .put, body: Self.body("x")) { _ in }
            try await client.execute(uri: "/persist/forever/ttl", method: .get) { response in
                #expect(response.status == .noContent)  // a value without an expiry has no time to live
            }
        }
    }

    @Test func timeToLiveOnTheSystemClock() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let persist = try MappedKVPersistDriver(directory: directory.path)
        let app = Application(router: makeRouter(persist))
        try await app.test(.router) { client in
            try await client.execute(uri: "/persist/a/10", method: .put, body: Self.body("x")) { _ in }
            try await client.execute(uri: "/persist/a/ttl", method: .get) { response in
                let ttl = try #require(Int(String(buffer: response.body)))
                #expect(ttl <= 10 && ttl > 1)
            }
        }
    }

    @Test func codableValues() async throws {
        try await withApp { client, _ in
            try await client.execute(uri: "/codable/a", method: .put, body: Self.body("Persist")) { _ in }
            try await client.execute(uri: "/codable/a", method: .get) { response in
                #expect(String(buffer: response.body) == "Persist")
            }
        }
    }

    @Test func getAsTheWrongType() async throws {
        try await withApp { client, _ in
            try await client.execute(uri: "/codable/a", method: .put, body: Self.body("hello")) { _ in }
            try await client.execute(uri: "/string/a", method: .get) { response in
                #expect(response.status == .badRequest)
            }
        }
    }

    @Test func remove() async throws {
        try await withApp { client, _ in
            try await client.execute(uri: "/persist/a", method: .put, body: Self.body("ThisIsTest1")) { _ in }
            try await client.execute(uri: "/persist/a", method: .delete) { response in
                #expect(response.status == .noContent)
            }
            try await client.execute(uri: "/persist/a", method: .get) { response in
                #expect(response.status == .noContent)
            }
        }
    }

    @Test func expireThenAdd() async throws {
        let clock = ManualClock()
        try await withApp(clock: clock) { client, _ in
            try await client.execute(uri: "/persist/a/0", method: .put, body: Self.body("ThisIsTest1")) { _ in }
            clock.advance(by: .seconds(1))
            try await client.execute(uri: "/persist/a", method: .get) { response in
                #expect(response.status == .noContent)
            }
            try await client.execute(uri: "/persist/a/10", method: .put, body: Self.body("ThisIsTest1")) { response in
                #expect(response.status == .ok)
            }
            try await client.execute(uri: "/persist/a", method: .get) { response in
                #expect(response.status == .ok)
                #expect(String(buffer: response.body) == "ThisIsTest1")
            }
            // An expired entry is absent for create too.
            clock.advance(by: .seconds(11))
            try await client.execute(uri: "/create/a", method: .put, body: Self.body("again")) { response in
                #expect(response.status == .ok)
            }
        }
    }

    @Test func setWithoutExpiryKeepsTheExistingExpiry() async throws {
        let clock = ManualClock()
        try await withApp(clock: clock) { client, _ in
            try await client.execute(uri: "/persist/a/10", method: .put, body: Self.body("first")) { _ in }
            clock.advance(by: .seconds(4))
            try await client.execute(uri: "/persist/a", method: .put, body: Self.body("second")) { _ in }
            try await client.execute(uri: "/persist/a/ttl", method: .get) { response in
                #expect(String(buffer: response.body) == "6")
            }
            clock.advance(by: .seconds(6) + .milliseconds(1))
            try await client.execute(uri: "/persist/a", method: .get) { response in
                #expect(response.status == .noContent)
            }
        }
    }

    @Test func tidyingWhileTheAppRunsKeepsLiveEntriesAndRemovesExpiredOnes() async throws {
        let clock = ManualClock()
        try await withApp(clock: clock, configuration: .init(tidyFrequency: .milliseconds(1)), runsDriver: true) {
            client, persist in
            try await client.execute(uri: "/persist/live/10", method: .put, body: Self.body("NotExpired")) { _ in }
            try await client.execute(uri: "/persist/old/1", method: .put, body: Self.body("Expired")) { _ in }
            clock.advance(by: .seconds(2))
            let tidied = try await eventually { try !persist.store.contains("old") }
            #expect(tidied, "run() did not remove the expired entry")
            try await client.execute(uri: "/persist/live", method: .get) { response in
                #expect(String(buffer: response.body) == "NotExpired")
            }
        }
    }
}
