// Sessions as records of a store of their own: an update of a session that was deleted or has
// expired does not bring it back, no limit of a cache in the same directory evicts a session, and
// namespaces keep the sessions and cache entries of two applications in one directory apart.

import Foundation
import MappedKV
import MappedKVCache
import Testing
import Vapor
import VaporTesting

@testable import VaporMappedKV

/// A cache for an app of ``withSessionApp(directory:configuration:cache:_:)``.
struct CacheInTheDirectory {
    var configuration = DiskCacheConfiguration()
    var namespace: String? = nil
}

/// Runs `test` on an app whose sessions live in `directory` as `configuration` says, with the
/// session routes, and (when `cache` is given) a cache in the same directory.
func withSessionApp(
    directory: String, configuration: MappedKVSessionsConfiguration, cache: CacheInTheDirectory? = nil,
    _ test: (Application) async throws -> Void
) async throws {
    try await withApp(
        configure: { app in
            if let cache {
                app.caches.use(
                    .mappedKV(directory: directory, configuration: cache.configuration, namespace: cache.namespace))
            }
            app.sessions.use(.mappedKV(directory: directory, configuration: configuration))
            registerSessionRoutes(app)
        }, test)
}

@Suite("sessions as records")
struct SessionRecordTests {
    @Test("an update after a delete returns the same ID and leaves the session deleted")
    func updateAfterDeleteDoesNotResurrect() async throws {
        let directory = try TestDirectory()
        defer { directory.remove() }
        try await withSessionApp(directory: directory.path) { app in
            let driver = app.sessions.driver
            let request = Request(application: app, on: app.eventLoopGroup.any())
            let id = try await driver.createSession(["name": "ada"], for: request).get()
            try await driver.deleteSession(id, for: request).get()
            let updated = try await driver.updateSession(id, to: ["name": "ada", "seen": "1"], for: request).get()
            #expect(updated == id)
            #expect(try await driver.readSession(id, for: request).get() == nil)
        }
    }

    @Test("an update after the session expired leaves it expired")
    func updateAfterExpiryDoesNotResurrect() async throws {
        let directory = try TestDirectory()
        defer { directory.remove() }
        let clock = ManualClock()
        try await withSessionApp(directory: directory.path, lifetime: .seconds(10), clock: clock) { app in
            let driver = app.sessions.driver
            let request = Request(application: app, on: app.eventLoopGroup.any())
            let id = try await driver.createSession(["name": "grace"], for: request).get()
            clock.advance(seconds: 5)
            #expect(try await driver.updateSession(id, to: ["name": "grace"], for: request).get() == id)
            clock.advance(seconds: 8)
            #expect(try await driver.readSession(id, for: request).get() == ["name": "grace"])
            clock.advance(seconds: 4)
            #expect(try await driver.updateSession(id, to: ["name": "grace"], for: request).get() == id)
            #expect(try await driver.readSession(id, for: request).get() == nil)
        }
    }

    @Test("a logout is not undone by a request that read the session before it and ends after it")
    func logoutDuringARequestStands() async throws {
        let directory = try TestDirectory()
        defer { directory.remove() }
        try await withSessionApp(directory: directory.path) { app in
            let cookie = try #require(try await logIn(app, as: "alan"))
            let id = SessionID(string: cookie.string)
            let request = Request(application: app, on: app.eventLoopGroup.any())
            // What the sessions middleware does for a request that used the session: read it at
            // the start, update it at the end. The logout falls in between.
            let read = try #require(try await app.sessions.driver.readSession(id, for: request).get())
            try await app.testing().test(
                .POST, "logout", beforeRequest: { req in req.headers.cookie = ["vapor-session": cookie] }
            ) { res in
                #expect(res.status == .ok)
            }
            _ = try await app.sessions.driver.updateSession(id, to: read, for: request).get()
            #expect(try await whoAmI(app, cookie: cookie).0 == .unauthorized)
        }
    }

    @Test("a cache with a count limit in the same directory never evicts a session")
    func cacheLimitsDoNotEvictSessions() async throws {
        let directory = try TestDirectory()
        defer { directory.remove() }
        var cacheConfiguration = DiskCacheConfiguration()
        cacheConfiguration.limits = DiskCacheLimits(count: 2)
        try await withSessionApp(
            directory: directory.path, configuration: MappedKVSessionsConfiguration(),
            cache: CacheInTheDirectory(configuration: cacheConfiguration)
        ) { app in
            let cookie = try #require(try await logIn(app, as: "barbara"))
            for index in 0..<50 { try await app.cache.set("page-\(index)", to: String(repeating: "x", count: 100)) }
            _ = try
                (app.mappedKVDirectories.cache(
                    directory: directory.path, configuration: cacheConfiguration, logger: app.logger
                ).get()).trim()
            #expect(try await app.cache.get("page-0", as: String.self) == nil)
            #expect(try await whoAmI(app, cookie: cookie) == (.ok, "barbara"))
        }
    }

    @Test("two applications in namespaces of their own share a directory and see nothing of each other")
    func namespacesKeepApplicationsApart() async throws {
        let directory = try TestDirectory()
        defer { directory.remove() }
        let shop = MappedKVSessionsConfiguration(namespace: "shop")
        let blog = MappedKVSessionsConfiguration(namespace: "blog/admin")
        try await withSessionApp(
            directory: directory.path, configuration: shop, cache: CacheInTheDirectory(namespace: "shop")
        ) { shopApp in
            try await withSessionApp(
                directory: directory.path, configuration: blog, cache: CacheInTheDirectory(namespace: "blog/admin")
            ) {
                blogApp in
                let cookie = try #require(try await logIn(shopApp, as: "edsger"))
                #expect(try await whoAmI(shopApp, cookie: cookie) == (.ok, "edsger"))
                #expect(try await whoAmI(blogApp, cookie: cookie).0 == .unauthorized)

                try await shopApp.cache.set("greeting", to: "from the shop")
                #expect(try await blogApp.cache.get("greeting", as: String.self) == nil)
                try await blogApp.cache.set("greeting", to: "from the blog")
                #expect(try await shopApp.cache.get("greeting", as: String.self) == "from the shop")
            }
        }
        // The default namespace sees neither.
        try await withSessionApp(directory: directory.path, configuration: .init(), cache: CacheInTheDirectory()) {
            app in
            let greeting = try await app.cache.get("greeting", as: String.self)
            #expect(greeting == nil)
        }
        #expect(KeyNamespace(area: "a", namespace: "x/y").prefix != KeyNamespace(area: "a", namespace: "x").prefix)
        #expect(KeyNamespace(area: "a", namespace: "x%2Fy").prefix != KeyNamespace(area: "a", namespace: "x/y").prefix)
        #expect(KeyNamespace(area: "a", namespace: nil).prefix == "a/")
    }

    @Test("the sessions store is marked as such and a plain open refuses it")
    func storeIsMarked() async throws {
        let directory = try TestDirectory()
        defer { directory.remove() }
        try await withSessionApp(directory: directory.path) { app in
            _ = try await logIn(app, as: "ada")
        }
        #expect(throws: MappedKVError.self) {
            _ = try MappedKV(id: SessionRecords.storeID, directory: directory.path)
        }
    }
}
