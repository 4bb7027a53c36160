// Several real processes of the example app on one directory, racing: counters that count every
// increment while other processes are killed mid-run, a create of one key that exactly one process
// wins, a session signed in through one process and used and ended through another, and tidying
// that the processes take turns at.
//
// Invariants: the children are the example app (Support/AppProcess), started on port 0; every wait
// polls a condition against a deadline; every child is stopped, or killed, whatever the test does.

import Foundation
import HTTPTypes
import HummingbirdTesting
import Synchronization
import Testing

@testable import HummingbirdMappedKV

@Suite("Processes racing on one directory", .serialized)
struct MultiProcessTests {
    @Test(.timeLimit(.minutes(5)))
    func incrementsFromSeveralProcessesAreAllCountedWhileOthersAreKilled() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let workers = 3
        let increments = 150
        let (apps, ports) = try await AppProcess.start(workers + 2, directory: directory.path)
        defer { for app in apps { app.stop() } }
        let victims = Array(apps[workers...])

        let done = SharedCount()
        let killed = try await withThrowingTaskGroup(of: Int.self) { group in
            for worker in 0..<workers {
                group.addTask {
                    try await TestClient.withClient(host: "127.0.0.1", port: ports[worker]) { client in
                        for _ in 0..<increments {
                            let response = try await AppProcess.send(.post, "/count/total", with: client)
                            try #require(
                                response.status == .ok, "worker \(worker): \(response.status) \(response.body)")
                            done.value.add(1, ordering: .relaxed)
                        }
                    }
                    return 0
                }
            }
            // Each victim increments another counter as fast as it can until it is killed (SIGKILL),
            // one at a third of the run and one at two thirds: whatever it was doing, in an
            // exclusive section or not, the workers' count goes on.
            for (index, victim) in victims.enumerated() {
                let port = ports[workers + index]
                group.addTask {
                    async let noise: Void = Self.hammer(port: port)
                    let due = (index + 1) * workers * increments / 3
                    let reached = await eventually(within: .seconds(240)) { done.value.load(ordering: .relaxed) >= due }
                    victim.kill()
                    _ = await noise
                    return reached ? 1 : 0
                }
            }
            return try await group.reduce(0, +)
        }
        #expect(killed == victims.count, "a victim was killed only at the deadline")
        for victim in victims { #expect(victim.process.terminationReason == .uncaughtSignal) }

        // Every worker's increments are counted, and a process started after the kills sees them.
        let (late, latePorts) = try await AppProcess.start(1, directory: directory.path)
        defer { late[0].stop() }
        let total = try await AppProcess.request(.post, "/count/total?by=0", port: latePorts[0])
        #expect(total.status == .ok)
        #expect(Int(total.body) == workers * increments, "total: \(total.body)")
        for worker in 0..<workers {
            #expect(try await AppProcess.request(.post, "/count/total?by=0", port: ports[worker]).body == total.body)
        }
    }

    /// Increments `noise` on the app at `port` until the app stops answering.
    static func hammer(port: Int) async {
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<4 {
                group.addTask {
                    do {
                        try await TestClient.withClient(host: "127.0.0.1", port: port) { client in
                            while true { _ = try await AppProcess.send(.post, "/count/noise", with: client) }
                        }
                    } catch {
                        return  // the app was killed
                    }
                }
            }
        }
    }

    @Test(.timeLimit(.minutes(3)))
    func exactlyOneProcessCreatesAKeyTheyAllCreateAtOnce() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let count = 4
        let (apps, ports) = try await AppProcess.start(count, directory: directory.path)
        defer { for app in apps { app.stop() } }
        for round in 0..<15 {
            let key = "race-\(round)"
            let statuses = try await withThrowingTaskGroup(of: HTTPResponse.Status.self) { group in
                for port in ports {
                    group.addTask {
                        try await AppProcess.request(.post, "/kv/\(key)", port: port, body: "from \(port)").status
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(statuses.filter { $0 == .created }.count == 1, "round \(round): \(statuses)")
            #expect(statuses.filter { $0 == .conflict }.count == count - 1, "round \(round): \(statuses)")
            // Every process reads the one winner's value.
            let values = try await withThrowingTaskGroup(of: String.self) { group in
                for port in ports {
                    group.addTask { try await AppProcess.request(.get, "/kv/\(key)", port: port).body }
                }
                return try await group.reduce(into: Set<String>()) { $0.insert($1) }
            }
            #expect(values.count == 1 && values.first?.hasPrefix("from ") == true, "round \(round): \(values)")
        }
    }

    @Test(.timeLimit(.minutes(3)))
    func aSessionSignedInThroughOneProcessIsKnownToAnotherUntilSignedOut() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let (apps, ports) = try await AppProcess.start(2, directory: directory.path)
        defer { for app in apps { app.stop() } }

        let login = try await AppProcess.request(.post, "/session/login?name=ada", port: ports[0])
        #expect(login.status == .ok)
        let cookie = try #require(login.headers[.setCookie], "no session cookie: \(login.headers)")
        #expect(cookie.hasPrefix("SESSION_ID="))

        // Process B knows the session process A started; without the cookie it knows nobody.
        let me = try await AppProcess.request(.get, "/session/me", port: ports[1], headers: [.cookie: cookie])
        #expect(me.status == .ok)
        #expect(me.body == "ada")
        #expect(try await AppProcess.request(.get, "/session/me", port: ports[1]).status == .unauthorized)

        // Signed out through B, the session is gone in A.
        let logout = try await AppProcess.request(.post, "/session/logout", port: ports[1], headers: [.cookie: cookie])
        #expect(logout.status == .noContent)
        let after = try await AppProcess.request(.get, "/session/me", port: ports[0], headers: [.cookie: cookie])
        #expect(after.status == .unauthorized)
    }
}

extension MultiProcessTests {
    @Test(.timeLimit(.minutes(3)))
    func processesTakeTurnsToTidyOncePerInterval() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        // Entries an earlier run left, expired by the time the apps start.
        let seed = try MappedKVPersistDriver(directory: directory.path)
        for index in 0..<200 { try await seed.set(key: "old-\(index)", value: index, expires: .zero) }
        let started = ContinuousClock.now
        let (apps, _) = try await AppProcess.start(
            3, directory: directory.path, arguments: ["--tidy-frequency", "1", "--log-level", "debug"])
        defer { for app in apps { app.stop() } }
        /// The tidies the apps have logged so far.
        func tidies() -> Int {
            apps.map { app in app.printed.split(separator: "\n").filter { $0.contains("removed=") }.count }
                .reduce(0, +)
        }

        // One of them tidies the old entries away at start.
        let tidied = await eventually(within: .seconds(60)) { (try? seed.store.contains("old-7")) == false }
        #expect(tidied, "the old entries were never tidied:\n\(apps.map(\.printed).joined())")
        #expect(try !seed.store.contains("old-199"))

        // Then about one tidy per second among the three, not one per process: at most one tidy
        // at each process's start and one per interval since the first (turns count whole wall-clock
        // milliseconds, so an interval may be up to a millisecond short: the bound divides by 990 ms).
        let reached = await eventually(within: .seconds(90)) { tidies() >= 8 }
        let count = tidies()
        let elapsed = started.duration(to: .now)
        #expect(reached, "\(count) tidies in \(elapsed)")
        let bound = apps.count + Int(elapsed / .milliseconds(990)) + 1
        #expect(count <= bound, "\(count) tidies in \(elapsed), at most \(bound) with turns")
    }
}

/// A count the tasks of a test share.
final class SharedCount: Sendable {
    let value = Atomic<Int>(0)
}
