// The driver's life and what it shares a directory with: a driver shut down (or whose run() ended)
// refuses every call with a clear error while other drivers go on; namespaces keep apps on one store
// apart, tidying included; metrics options and a logger label reach the store.
//
// Invariant: each test has its own directory; time moves only when the test advances its clock.

import Foundation
import Hummingbird
import Logging
import MappedKV
import MetricsTestKit
import ServiceLifecycle
import Testing

@testable import HummingbirdMappedKV

@Suite("Lifecycle, namespaces and metrics")
struct LifecycleTests {
    /// Whether `body` throws the store's closed error.
    static func throwsClosed(_ body: () async throws -> Void) async -> Bool {
        do {
            try await body()
            return false
        } catch MappedKVError.closed {
            return true
        } catch {
            return false
        }
    }

    @Test func aDriverShutDownRefusesEveryCallAndOthersGoOn() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let persist = try MappedKVPersistDriver(directory: directory.path)
        let other = try MappedKVPersistDriver(directory: directory.path)
        try await persist.set(key: "k", value: 1)
        try await persist.shutdown()
        try await persist.shutdown()  // again: nothing
        #expect(await Self.throwsClosed { _ = try await persist.get(key: "k", as: Int.self) })
        #expect(await Self.throwsClosed { try await persist.set(key: "k", value: 2) })
        #expect(await Self.throwsClosed { try await persist.set(key: "k", value: 2, expires: .seconds(1)) })
        #expect(await Self.throwsClosed { try await persist.create(key: "new", value: 2, expires: nil) })
        #expect(await Self.throwsClosed { try await persist.increment(key: "n") })
        #expect(await Self.throwsClosed { try await persist.remove(key: "k") })
        #expect(await Self.throwsClosed { try await persist.removeExpired() })
        #expect(try await other.get(key: "k", as: Int.self) == 1)
        try await other.set(key: "k", value: 3)
        #expect(try await other.get(key: "k", as: Int.self) == 3)
    }

    @Test(.timeLimit(.minutes(1)))
    func theEndOfRunClosesTheStore() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let persist = try MappedKVPersistDriver(directory: directory.path)
        let group = ServiceGroup(
            configuration: ServiceGroupConfiguration(services: [persist], logger: Logger(label: "test")))
        let running = Task { try await group.run() }
        try await persist.set(key: "k", value: 1)
        await group.triggerGracefulShutdown()
        try await running.value
        #expect(await Self.throwsClosed { _ = try await persist.get(key: "k", as: Int.self) })
    }

    @Test func namespacesOnOneStoreNeverSeeEachOthersKeys() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let clock = ManualClock()
        let one = try MappedKVPersistDriver.testing(
            directory: directory.path, clock: clock, configuration: .init(namespace: "one"))
        let two = try MappedKVPersistDriver.testing(
            directory: directory.path, clock: clock, configuration: .init(namespace: "two"))
        let whole = try MappedKVPersistDriver.testing(directory: directory.path, clock: clock)
        try await one.set(key: "k", value: "of one")
        #expect(try await two.get(key: "k", as: String.self) == nil)
        try await two.create(key: "k", value: "of two", expires: nil)  // no duplicate across namespaces
        #expect(try await one.increment(key: "n") == 1)
        #expect(try await two.increment(key: "n") == 1)
        #expect(try await one.get(key: "k", as: String.self) == "of one")
        #expect(try await two.get(key: "k", as: String.self) == "of two")
        // Without a namespace, the driver sees the stored keys.
        #expect(try await whole.get(key: "one:k", as: String.self) == "of one")
        #expect(try await whole.get(key: "k", as: String.self) == nil)
        try await two.remove(key: "k")
        #expect(try await one.get(key: "k", as: String.self) == "of one")

        // Tidying one namespace removes only its own expired entries.
        try await one.set(key: "short", value: 1, expires: .seconds(1))
        try await two.set(key: "short", value: 2, expires: .seconds(1))
        clock.advance(by: .seconds(2))
        #expect(try await one.removeExpired() == 1)
        #expect(try !one.store.contains("one:short"))
        #expect(try one.store.contains("two:short"))
        #expect(try await two.removeExpired() == 1)
    }

    @Test func namespacesThatCouldOverlapAreRefused() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        for namespace in ["", "a:b", "\u{1}kind"] {
            #expect(throws: MappedKVPersistError.self) {
                try MappedKVPersistDriver(directory: directory.path, configuration: .init(namespace: namespace))
            }
        }
    }

    @Test func metricsOptionsAndTheLoggerLabelReachTheStore() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let metrics = TestMetrics()
        let persist = try MappedKVPersistDriver(
            directory: directory.path,
            configuration: .init(
                metrics: MetricsOptions(labelPrefix: "persist", factory: metrics), loggerLabel: "app.persist"))
        try await persist.set(key: "k", value: 1, expires: .seconds(60))
        try await persist.set(key: "k", value: 2, expires: .seconds(60))
        let sets = try metrics.expectCounter("persist.store.operations", [("op", "set")])
        #expect(sets.totalValue == 2)
        #expect(persist.logger.label == "app.persist")
        // A logger given to the initialiser wins over the label.
        let given = try MappedKVPersistDriver(
            directory: directory.path, configuration: .init(loggerLabel: "app.persist"), logger: Logger(label: "given"))
        #expect(given.logger.label == "given")
    }
}
