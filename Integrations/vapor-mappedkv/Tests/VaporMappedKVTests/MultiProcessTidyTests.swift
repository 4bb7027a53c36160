// The tidy of expired sessions with real processes of the example app on one directory: each
// process tidies when it starts and then every second, yet the processes take turns, so the
// tidies stay within one per process start plus one per second, and every expired session is
// removed once.

import Foundation
import NIOHTTP1
import Testing

/// The tidies a process logged, each with the number of sessions it removed.
private func tidies(in printed: String) -> [Int] {
    printed.split(separator: "\n").compactMap { line -> Int? in
        guard let phrase = line.range(of: "removed expired sessions") else { return nil }
        let digits = line[phrase.upperBound...].drop { !$0.isNumber }.prefix { $0.isNumber }
        return Int(digits)
    }
}

@Suite("example app processes: the tidy")
struct MultiProcessTidyTests {
    @Test("three processes remove expired sessions once, taking turns, about once a second")
    func processesTakeTurnsTidying() async throws {
        let directory = try TestDirectory("vapor-mappedkv-tidy")
        defer { directory.remove() }
        let environment = ["MAPPEDKV_SESSION_LIFETIME": "1", "MAPPEDKV_TIDY_INTERVAL": "1", "LOG_LEVEL": "debug"]
        let started = ContinuousClock.now
        let first = try ExampleAppProcess(directory: directory.path, extraEnvironment: environment)
        defer { first.stop() }
        var cookies: [String] = []
        for name in ["ada", "grace", "alan", "barbara", "edsger"] {
            let login = try await send(.POST, first.baseURL + "/login", json: #"{"name":"\#(name)"}"#)
            cookies.append(try #require(login.setCookie))
        }
        let others = try (0..<2).map { _ in
            try ExampleAppProcess(directory: directory.path, extraEnvironment: environment)
        }
        defer { for other in others { other.stop() } }
        let processes = [first] + others

        // The sessions expire within two seconds of their login; polled with a deadline.
        let deadline = ContinuousClock.now + .seconds(60)
        var removed = 0
        while removed < cookies.count, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(50))  // polling the processes' logs
            removed = processes.map { tidies(in: $0.printed).reduce(0, +) }.reduce(0, +)
        }
        #expect(removed == cookies.count)

        let elapsedSeconds = Int((ContinuousClock.now - started).components.seconds) + 1
        let tidyCount = processes.map { tidies(in: $0.printed).count }.reduce(0, +)
        #expect(tidyCount >= 1)
        #expect(tidyCount <= processes.count + elapsedSeconds + 1, "\(tidyCount) tidies in \(elapsedSeconds) s")
        for cookie in cookies {
            #expect(try await send(.GET, others[0].baseURL + "/me", cookie: cookie).status == 401)
        }
    }
}
