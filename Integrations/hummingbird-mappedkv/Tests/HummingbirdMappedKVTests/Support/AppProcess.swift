// One copy of the example app as a child process, and the HTTP requests the multi-process tests
// send it.
//
// Invariants: the child is the app binary built next to this test bundle, started on port 0 (it
// prints the port it bound); waits poll a condition against a deadline; `stop()` always leaves the
// child ended (SIGTERM, then SIGKILL if it lingers) and reaped.

import Foundation
import HTTPTypes
import HummingbirdTesting
import NIOCore
import Synchronization
import Testing

/// One running copy of the example app.
final class AppProcess: Sendable {
    let process: Process
    /// What the app printed, appended to as it arrives.
    private let output = PrintedText()

    /// The example app's binary: built by `swift build` into the folder of this test bundle.
    static var binary: URL {
        URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().deletingLastPathComponent()
            .appendingPathComponent("HummingbirdMappedKVExample")
    }

    /// Starts the app on `directory`, on a free loopback port, with `arguments` after the others.
    init(directory: String, arguments: [String] = []) throws {
        process = Process()
        process.executableURL = Self.binary
        process.arguments = ["--directory", directory, "--hostname", "127.0.0.1", "--port", "0"] + arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        pipe.fileHandleForReading.readabilityHandler = { [output] handle in
            let text = String(decoding: handle.availableData, as: UTF8.self)
            output.text.withLock { $0 += text }
        }
        try process.run()
    }

    /// What the app printed so far.
    var printed: String { output.text.withLock { $0 } }

    /// The port the app listens on, once it has printed it.
    var port: Int? {
        for line in printed.split(separator: "\n") where line.hasPrefix("listening on ") {
            if let port = line.split(separator: ":").last.flatMap({ Int($0) }) { return port }
        }
        return nil
    }

    /// Ends the app at once with SIGKILL, as a crash would, and reaps it.
    func kill() {
        guard process.isRunning else { return }
        Foundation.kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }

    /// Stops the app: SIGTERM for a graceful shutdown, SIGKILL if it is still running after 5 s.
    func stop() {
        guard process.isRunning else { return }
        process.terminate()
        let deadline = ContinuousClock.now.advanced(by: .seconds(5))
        while process.isRunning, ContinuousClock.now < deadline { usleep(10_000) }
        if process.isRunning { Foundation.kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
    }
}

/// Text a child prints, shared between the pipe's handler and the test.
final class PrintedText: Sendable {
    let text = Mutex("")
}

extension AppProcess {
    /// Starts `count` copies of the app on `directory` and waits until each has printed its port.
    /// The caller stops them; on a start that fails, those started are stopped here.
    static func start(
        _ count: Int, directory: String, arguments: [String] = []
    ) async throws -> (apps: [AppProcess], ports: [Int]) {
        try #require(
            FileManager.default.isExecutableFile(atPath: binary.path),
            "build the example app first (swift build): \(binary.path) is missing")
        var apps: [AppProcess] = []
        do {
            for _ in 0..<count { apps.append(try AppProcess(directory: directory, arguments: arguments)) }
            let started = await eventually(within: .seconds(60)) { apps.allSatisfy { $0.port != nil } }
            try #require(started, "the apps did not start:\n\(apps.map(\.printed).joined(separator: "\n"))")
            return (apps, try apps.map { try #require($0.port) })
        } catch {
            for app in apps { app.stop() }
            throw error
        }
    }

    /// One request to the app on `port`, on a connection of its own.
    static func request(
        _ method: HTTPRequest.Method, _ uri: String, port: Int, body: String? = nil, headers: HTTPFields = [:]
    ) async throws -> (status: HTTPResponse.Status, body: String, headers: HTTPFields) {
        try await TestClient.withClient(host: "127.0.0.1", port: port) { client in
            try await send(method, uri, with: client, body: body, headers: headers)
        }
    }

    /// One request through `client`, a connection the caller keeps for several.
    static func send(
        _ method: HTTPRequest.Method, _ uri: String, with client: TestClient, body: String? = nil,
        headers: HTTPFields = [:]
    ) async throws -> (status: HTTPResponse.Status, body: String, headers: HTTPFields) {
        let response = try await client.execute(
            TestClient.Request(uri, method: method, headers: headers, body: body.map { ByteBuffer(string: $0) }))
        return (response.status, response.body.map { String(buffer: $0) } ?? "", response.headers)
    }
}
