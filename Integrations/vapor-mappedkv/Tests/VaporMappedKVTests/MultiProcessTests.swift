// Real processes of the example app on one directory, driven over loopback: counters incremented
// by several processes at once end at exactly the number of increments, while another process
// incrementing its own counter is killed by SIGKILL in the middle; a rate limit counts requests
// made through any process; and a logout in one process stands against a request of the same
// session that was running in another process when it happened.

import Foundation
import NIOHTTP1
import Testing

/// Polls `condition` until it holds or `timeout` passes; returns whether it held.
private func eventually(
    timeout: Duration = .seconds(60), _ condition: () async throws -> Bool
) async throws -> Bool {
    let deadline = ContinuousClock.now + timeout
    while ContinuousClock.now < deadline {
        if try await condition() { return true }
        try await Task.sleep(for: .milliseconds(10))  // polling the condition, with a deadline
    }
    return try await condition()
}

@Suite("example app processes: counters, rate limit, logout", .serialized)
struct MultiProcessTests {
    @Test("3 processes x 150 increments end at exactly 450, with a fourth process killed mid-way")
    func countersAcrossProcessesSurviveAKill() async throws {
        let directory = try TestDirectory("vapor-mappedkv-counters")
        defer { directory.remove() }
        let processCount = 3
        let increments = 150
        let apps = try (0..<processCount).map { _ in try ExampleAppProcess(directory: directory.path) }
        defer { for app in apps { app.stop() } }
        let victim = try ExampleAppProcess(directory: directory.path)
        defer { victim.stop() }

        // The victim counts its own counter without pause until it is killed.
        let victimURL = victim.baseURL
        let victimLoad = Task {
            while !Task.isCancelled {
                guard (try? await send(.POST, victimURL + "/counters/victim")) != nil else { return }
            }
        }
        defer { victimLoad.cancel() }
        // The others count the shared counter, each with several requests in flight.
        let urls = apps.map(\.baseURL)
        let counted = Task {
            try await withThrowingTaskGroup(of: Void.self) { group in
                for url in urls {
                    for lane in 0..<3 {
                        group.addTask {
                            for _ in stride(from: lane, to: increments, by: 3) {
                                let response = try await send(.POST, url + "/counters/shared")
                                #expect(response.status == 200, "\(response.body)")
                            }
                        }
                    }
                }
                try await group.waitForAll()
            }
        }
        // Killed once both counters are moving, so the kill falls among the others' increments.
        let moving = try await eventually {
            let victimCount = Int(try await send(.GET, apps[0].baseURL + "/counters/victim").body) ?? 0
            let sharedCount = Int(try await send(.GET, apps[0].baseURL + "/counters/shared").body) ?? 0
            return victimCount >= 20 && sharedCount >= 20
        }
        #expect(moving)
        victim.kill()
        #expect(victim.wasKilled)
        // The others were still counting when the victim died.
        let atKill = Int(try await send(.GET, urls[0] + "/counters/shared").body) ?? -1
        #expect(atKill < processCount * increments)
        try await counted.value

        let total = try await send(.GET, apps[1].baseURL + "/counters/shared")
        #expect(total.status == 200)
        #expect(Int(total.body) == processCount * increments)
        // The store is still usable after the kill: the victim's counter goes on from where it was.
        let before = Int(try await send(.GET, apps[2].baseURL + "/counters/victim").body) ?? -1
        #expect(before >= 20)
        let after = try await send(.POST, apps[2].baseURL + "/counters/victim")
        #expect(Int(after.body) == before + 1)
    }

    @Test("a rate limit counts the requests made through every process")
    func rateLimitIsSharedAcrossProcesses() async throws {
        let directory = try TestDirectory("vapor-mappedkv-rate")
        defer { directory.remove() }
        // A window of ten years, so that no window ends during the test.
        let environment = ["MAPPEDKV_RATE_LIMIT": "4", "MAPPEDKV_RATE_WINDOW": "315360000"]
        let first = try ExampleAppProcess(directory: directory.path, extraEnvironment: environment)
        defer { first.stop() }
        let second = try ExampleAppProcess(directory: directory.path, extraEnvironment: environment)
        defer { second.stop() }
        for url in [first.baseURL, second.baseURL, first.baseURL, second.baseURL] {
            #expect(try await send(.GET, url + "/limited").status == 200)
        }
        for url in [first.baseURL, second.baseURL] {
            let refused = try await send(.GET, url + "/limited")
            #expect(refused.status == 429)
            let retryAfter = refused.headers.first(name: "Retry-After").flatMap(Int.init)
            #expect(retryAfter.map { $0 >= 1 && $0 <= 315_360_000 } == true)
        }
    }

    @Test("a logout in one process stands against a request of that session still running in another")
    func logoutStandsAgainstARunningRequest() async throws {
        let directory = try TestDirectory("vapor-mappedkv-logout")
        defer { directory.remove() }
        let first = try ExampleAppProcess(directory: directory.path)
        defer { first.stop() }
        let second = try ExampleAppProcess(directory: directory.path)
        defer { second.stop() }
        let login = try await send(.POST, first.baseURL + "/login", json: #"{"name":"ada"}"#)
        let cookie = try #require(login.setCookie, "the first app set no session cookie:\n\(first.printed)")

        // A request of the session that reads it, stores the note "go-waiting", and ends once
        // the note "go" exists: the logout falls between its read and its end.
        let firstURL = first.baseURL
        let running = Task { try await send(.GET, firstURL + "/me/after/go", cookie: cookie) }
        let waiting = try await eventually { try await send(.GET, second.baseURL + "/notes/go-waiting").status == 200 }
        #expect(waiting)
        #expect(try await send(.POST, second.baseURL + "/logout", cookie: cookie).status == 200)
        #expect(try await send(.GET, second.baseURL + "/me", cookie: cookie).status == 401)
        #expect(try await send(.PUT, second.baseURL + "/notes/go", json: #"{"text":"go"}"#).status == 204)
        let ended = try await running.value
        #expect(ended.status == 200)
        #expect(ended.body == "ada")
        #expect(try await send(.GET, second.baseURL + "/me", cookie: cookie).status == 401)
        #expect(try await send(.GET, first.baseURL + "/me", cookie: cookie).status == 401)
    }
}
