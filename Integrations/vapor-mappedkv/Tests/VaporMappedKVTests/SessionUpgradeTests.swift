// The upgrade from the first release: sessions it stored as disk cache entries under
// `vapor.session/` move into the sessions store when the new driver starts, with what remained of
// their lifetime, so no one is logged out; each moves once, and a session deleted after the move
// is not brought back by a later start.

import Foundation
import MappedKV
import MappedKVCache
import Testing
import Vapor
import VaporTesting

@testable import VaporMappedKV

/// Writes a session as the first release did: JSON session data in the directory's disk cache
/// under `vapor.session/<id>`, expiring after `lifetime` by `clock`.
private func writeFirstReleaseSession(
    _ data: SessionData, id: String, lifetime: Duration, in directory: String, clock: ManualClock
) throws {
    let disk = try DiskCache(directory: directory, configuration: DiskCacheConfiguration(clock: clock.cacheClock))
    defer { disk.close() }
    try disk.set([UInt8](try JSONEncoder().encode(data)), forKey: "vapor.session/" + id, timeToLive: lifetime)
}

/// Whether the directory's disk cache still holds the first release's entry of session `id`.
private func firstReleaseEntryExists(id: String, in directory: String) throws -> Bool {
    let disk = try DiskCache(directory: directory)
    defer { disk.close() }
    return try disk.contains("vapor.session/" + id)
}

@Suite("upgrading the first release's sessions")
struct SessionUpgradeTests {
    @Test("sessions of the first release are read after the upgrade and keep their remaining lifetime")
    func firstReleaseSessionsMove() async throws {
        let directory = try TestDirectory()
        defer { directory.remove() }
        let clock = ManualClock()
        try writeFirstReleaseSession(
            ["name": "ada"], id: "old-ada", lifetime: .seconds(100), in: directory.path, clock: clock)
        try writeFirstReleaseSession(
            ["name": "grace"], id: "old-grace", lifetime: .seconds(1000), in: directory.path, clock: clock)
        let cacheEntry = try DiskCache(directory: directory.path)
        try cacheEntry.set(Array(#""cached""#.utf8), forKey: "vapor.cache/page")
        cacheEntry.close()
        clock.advance(seconds: 30)

        let configuration = MappedKVSessionsConfiguration(lifetime: .seconds(1000), clock: clock.expiryClock)
        try await withSessionApp(directory: directory.path, configuration: configuration, cache: CacheInTheDirectory())
        { app in
            let oldAdaLeft = try firstReleaseEntryExists(id: "old-ada", in: directory.path)
            #expect(oldAdaLeft == false)
            let oldGraceLeft = try firstReleaseEntryExists(id: "old-grace", in: directory.path)
            #expect(oldGraceLeft == false)
            let page = try await app.cache.get("page", as: String.self)
            #expect(page == "cached")
            let driver = app.sessions.driver
            let request = Request(application: app, on: app.eventLoopGroup.any())
            let grace = try await driver.readSession(SessionID(string: "old-grace"), for: request).get()
            #expect(grace == ["name": "grace"])
            // 70 s were left of ada's 100: still there at 69, gone at 71.
            clock.advance(seconds: 69)
            let adaBefore = try await driver.readSession(SessionID(string: "old-ada"), for: request).get()
            #expect(adaBefore == ["name": "ada"])
            clock.advance(seconds: 2)
            let adaAfter = try await driver.readSession(SessionID(string: "old-ada"), for: request).get()
            #expect(adaAfter == nil)
            let graceByCookie = try await whoAmI(app, cookie: HTTPCookies.Value(string: "old-grace"))
            #expect(graceByCookie == (.ok, "grace"))
        }
    }

    @Test("a session deleted after the move is not brought back by a later start")
    func deletedAfterMoveStaysDeleted() async throws {
        let directory = try TestDirectory()
        defer { directory.remove() }
        let clock = ManualClock()
        try writeFirstReleaseSession(
            ["name": "alan"], id: "old-alan", lifetime: .seconds(600), in: directory.path, clock: clock)
        let configuration = MappedKVSessionsConfiguration(clock: clock.expiryClock)
        try await withSessionApp(directory: directory.path, configuration: configuration) { app in
            let alan = try await whoAmI(app, cookie: HTTPCookies.Value(string: "old-alan"))
            #expect(alan == (.ok, "alan"))
            try await app.testing().test(
                .POST, "logout", beforeRequest: { req in req.headers.cookie = ["vapor-session": "old-alan"] }
            ) { res in
                #expect(res.status == .ok)
            }
        }
        try await withSessionApp(directory: directory.path, configuration: configuration) { app in
            let alanAfterLogout = try await whoAmI(app, cookie: HTTPCookies.Value(string: "old-alan")).0
            #expect(alanAfterLogout == .unauthorized)
        }
    }

    @Test("a session already in the store wins over an old entry of the same ID, which is removed")
    func storeWinsOverOldEntry() async throws {
        let directory = try TestDirectory()
        defer { directory.remove() }
        let clock = ManualClock()
        let configuration = MappedKVSessionsConfiguration(clock: clock.expiryClock)
        let store = try SessionRecords.openStore(
            directory: directory.path, configuration: configuration, logger: MappedKV.silentLogger)
        try store.set(#"{"name":"current"}"#, forKey: "session/both", expiresAfter: .seconds(600))
        store.close()
        try writeFirstReleaseSession(
            ["name": "stale"], id: "both", lifetime: .seconds(600), in: directory.path, clock: clock)
        try await withSessionApp(directory: directory.path, configuration: configuration) { app in
            let current = try await whoAmI(app, cookie: HTTPCookies.Value(string: "both"))
            #expect(current == (.ok, "current"))
            let oldBothLeft = try firstReleaseEntryExists(id: "both", in: directory.path)
            #expect(oldBothLeft == false)
        }
    }

    @Test("an application with a namespace leaves the first release's sessions where they are")
    func namespacedApplicationDoesNotTakeOldSessions() async throws {
        let directory = try TestDirectory()
        defer { directory.remove() }
        let clock = ManualClock()
        try writeFirstReleaseSession(
            ["name": "ada"], id: "old", lifetime: .seconds(600), in: directory.path, clock: clock)
        let configuration = MappedKVSessionsConfiguration(namespace: "other", clock: clock.expiryClock)
        try await withSessionApp(directory: directory.path, configuration: configuration) { app in
            let oldStatus = try await whoAmI(app, cookie: HTTPCookies.Value(string: "old")).0
            #expect(oldStatus == .unauthorized)
        }
        #expect(try firstReleaseEntryExists(id: "old", in: directory.path))
    }
}
