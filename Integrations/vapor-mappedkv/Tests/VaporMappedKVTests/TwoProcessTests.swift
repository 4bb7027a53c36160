// Two real processes of the example app on one MappedKV directory, each on its own loopback port:
// what one writes over HTTP (a cached note, a session) the other reads back over HTTP, and what one
// removes the other no longer finds. The state is shared through the directory alone.

import Foundation
import NIOHTTP1
import Testing

@Suite("two example app processes on one directory")
struct TwoProcessTests {
    @Test("one process writes a note and a session over HTTP; the other reads both over HTTP")
    func twoProcessesShareCacheAndSessions() async throws {
        let directory = try TestDirectory("vapor-mappedkv-two")
        defer { directory.remove() }
        let first = try ExampleAppProcess(directory: directory.path)
        defer { first.stop() }
        let second = try ExampleAppProcess(directory: directory.path)
        defer { second.stop() }
        #expect(first.port != second.port)

        // The cache: written through the first, read and deleted through the second.
        let put = try await send(.PUT, first.baseURL + "/notes/shared", json: #"{"text":"written by the first"}"#)
        #expect(put.status == 204)
        let read = try await send(.GET, second.baseURL + "/notes/shared")
        #expect(read.status == 200)
        #expect(read.body == #"{"text":"written by the first"}"#)
        #expect(try await send(.DELETE, second.baseURL + "/notes/shared").status == 204)
        #expect(try await send(.GET, first.baseURL + "/notes/shared").status == 404)

        // A session: made by logging in on the first, found on the second, ended there.
        let login = try await send(.POST, first.baseURL + "/login", json: #"{"name":"ada"}"#)
        #expect(login.status == 200)
        let cookie = try #require(login.setCookie, "the first app set no session cookie:\n\(first.printed)")
        let me = try await send(.GET, second.baseURL + "/me", cookie: cookie)
        #expect(me.status == 200)
        #expect(me.body == "ada")
        #expect(try await send(.POST, second.baseURL + "/logout", cookie: cookie).status == 200)
        #expect(try await send(.GET, first.baseURL + "/me", cookie: cookie).status == 401)
    }
}
