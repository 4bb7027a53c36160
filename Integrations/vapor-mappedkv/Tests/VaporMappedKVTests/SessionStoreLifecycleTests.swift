// The sessions store's life in an application: the tidy at boot removes expired sessions and
// nothing else, one process (here: one application) at a time; shutdown stops the tidy and closes
// the store; the configurations' metrics (the sessions store's and the cache's) reach
// swift-metrics.

import Foundation
import MappedKV
import MappedKVCache
import MetricsTestKit
import Testing
import Vapor
import VaporTesting

@testable import VaporMappedKV

@Suite("the sessions store's lifecycle")
struct SessionStoreLifecycleTests {
    @Test("a tidy removes the expired sessions and keeps the live ones; a second one at once is refused")
    func tidyRemovesExpiredSessions() async throws {
        let directory = try TestDirectory()
        defer { directory.remove() }
        let clock = ManualClock()
        var configuration = MappedKVSessionsConfiguration(lifetime: .seconds(60), clock: clock.expiryClock)
        configuration.tidyStepKeys = 4
        try await withSessionApp(directory: directory.path, configuration: configuration) { app in
            let driver = app.sessions.driver
            let request = Request(application: app, on: app.eventLoopGroup.any())
            for index in 0..<20 { _ = try await driver.createSession(["n": "\(index)"], for: request).get() }
            clock.advance(seconds: 30)
            var live: [SessionID] = []
            for index in 0..<5 {
                live.append(try await driver.createSession(["n": "live \(index)"], for: request).get())
            }
            clock.advance(seconds: 40)

            let store = try #require(
                try? app.mappedKVDirectories.sessionsStore(
                    directory: directory.path, configuration: configuration, logger: app.logger
                ).get())
            #expect(try store.count(includingExpired: true) >= 25)
            let tidy = SessionTidy(store: store, interval: .seconds(3600), stepKeys: 4, logger: app.logger)
            let removed = await tidy.tidy(force: true)
            #expect(removed == 20)
            #expect(try store.allKeys(includingExpired: true).filter { $0.hasPrefix("session/") }.count == 5)
            for id in live { #expect(try await driver.readSession(id, for: request).get() != nil) }
            // Within the interval the turn is not given again, unless forced.
            #expect(await tidy.tidy(force: false) == nil)
            #expect(await tidy.tidy(force: true) == 0)
        }
    }

    @Test("the application's boot runs a tidy that removes the sessions that expired meanwhile")
    func bootTidies() async throws {
        let directory = try TestDirectory()
        defer { directory.remove() }
        let clock = ManualClock()
        let configuration = MappedKVSessionsConfiguration(lifetime: .seconds(60), clock: clock.expiryClock)
        try await withSessionApp(directory: directory.path, configuration: configuration) { app in
            let request = Request(application: app, on: app.eventLoopGroup.any())
            for _ in 0..<10 { _ = try await app.sessions.driver.createSession(["a": "b"], for: request).get() }
        }
        clock.advance(seconds: 61)
        try await withSessionApp(directory: directory.path, configuration: configuration) { app in
            let store = try app.mappedKVDirectories.sessionsStore(
                directory: directory.path, configuration: configuration, logger: app.logger
            ).get()
            let sessionKeys = { try store.allKeys(includingExpired: true).filter { $0.hasPrefix("session/") } }
            #expect(try sessionKeys().count == 10)
            try await app.asyncBoot()
            let deadline = ContinuousClock.now + .seconds(30)
            while try !sessionKeys().isEmpty, ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(10))  // polling the store, with a deadline
            }
            #expect(try sessionKeys().isEmpty)
        }
    }

    @Test("shutdown closes the sessions store: the driver fails afterwards instead of writing")
    func shutdownClosesTheStore() async throws {
        let directory = try TestDirectory()
        defer { directory.remove() }
        let app = try await Application.make(.testing)
        app.sessions.use(.mappedKV(directory: directory.path))
        let driver = app.sessions.driver
        let store = try app.mappedKVDirectories.sessionsStore(
            directory: directory.path, configuration: MappedKVSessionsConfiguration(), logger: app.logger
        ).get()
        try await app.asyncBoot()
        let request = Request(application: app, on: app.eventLoopGroup.any())
        _ = try await driver.createSession(["a": "b"], for: request).get()
        try await app.asyncShutdown()
        #expect(throws: MappedKVError.self) { _ = try store.count }
    }

    @Test("the configuration's metrics options reach swift-metrics")
    func metricsReachTheFactory() async throws {
        let directory = try TestDirectory()
        defer { directory.remove() }
        let metrics = TestMetrics()
        let configuration = MappedKVSessionsConfiguration(
            metrics: MetricsOptions(labelPrefix: "shop.sessions", dimensions: [("app", "shop")], factory: metrics))
        try await withSessionApp(directory: directory.path, configuration: configuration) { app in
            let driver = app.sessions.driver
            let request = Request(application: app, on: app.eventLoopGroup.any())
            let id = try await driver.createSession(["a": "b"], for: request).get()
            _ = try await driver.readSession(id, for: request).get()
        }
        let sets = metrics.counters(
            label: "shop.sessions.store.operations", dimensions: [("op", "set"), ("app", "shop")])
        #expect(sets.map(\.totalValue).reduce(0, +) >= 1)
        let gets = metrics.counters(
            label: "shop.sessions.store.operations", dimensions: [("op", "get"), ("app", "shop")])
        #expect(gets.map(\.totalValue).reduce(0, +) >= 1)
    }

    @Test("the cache's metrics options, given in its configuration, reach swift-metrics")
    func cacheMetricsReachTheFactory() async throws {
        let directory = try TestDirectory()
        defer { directory.remove() }
        let metrics = TestMetrics()
        let configuration = DiskCacheConfiguration(
            metrics: MetricsOptions(labelPrefix: "shop.cache", dimensions: [("app", "shop")], factory: metrics))
        let configure: (Application) async throws -> Void = { app in
            app.caches.use(.mappedKV(directory: directory.path, configuration: configuration))
        }
        try await withApp(configure: configure) { app in
            try await app.cache.set("page", to: "cached")
            let page = try await app.cache.get("page", as: String.self)
            let missing = try await app.cache.get("missing", as: String.self)
            #expect(page == "cached" && missing == nil)
        }
        let hits = metrics.counters(label: "shop.cache.cache.hits", dimensions: [("tier", "disk"), ("app", "shop")])
        #expect(hits.map(\.totalValue).reduce(0, +) == 1)
        let misses = metrics.counters(
            label: "shop.cache.cache.misses", dimensions: [("tier", "disk"), ("app", "shop")])
        #expect(misses.map(\.totalValue).reduce(0, +) == 1)
    }
}
