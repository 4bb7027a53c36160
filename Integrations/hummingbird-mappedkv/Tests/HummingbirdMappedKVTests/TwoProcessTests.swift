// Two real processes of the example app on one directory, each on its own loopback port: what one
// writes through HTTP, the other reads through HTTP, with expiry, create and remove seen across.
//
// Invariants: the children are the app binary built next to this test bundle, started on port 0
// (each prints the port it bound); every wait polls a condition against a deadline; both children
// are terminated, and killed if they linger, whatever the test does.

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

    /// Starts the app on `directory`, on a free loopback port.
    init(directory: String) throws {
        process = Process()
        process.executableURL = Self.binary
        process.arguments = ["--directory", directory, "--hostname", "127.0.0.1", "--port", "0"]
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

    /// Stops the app: SIGTERM for a graceful shutdown, SIGKILL if it is still running after 5 s.
    func stop() {
        guard process.isRunning else { return }
        process.terminate()
        let deadline = ContinuousClock.now.advanced(by: .seconds(5))
        while process.isRunning, ContinuousClock.now < deadline { usleep(10_000) }
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
    }
}

/// Text a child prints, shared between the pipe's handler and the test.
final class PrintedText: Sendable {
    let text = Mutex("")
}

@Suite("Two app processes on one directory", .serialized)
struct TwoProcessTests {
    /// One request to the app on `port`.
    static func request(
        _ method: HTTPRequest.Method, _ uri: String, port: Int, body: String? = nil
    ) async throws -> (status: HTTPResponse.Status, body: String) {
        try await TestClient.withClient(host: "127.0.0.1", port: port) { client in
            let response = try await client.execute(
                TestClient.Request(uri, method: method, body: body.map { ByteBuffer(string: $0) }))
            return (response.status, response.body.map { String(buffer: $0) } ?? "")
        }
    }

    @Test(.timeLimit(.minutes(2)))
    func oneProcessWritesAndTheOtherReadsOverLoopback() async throws {
        try #require(
            FileManager.default.isExecutableFile(atPath: AppProcess.binary.path),
            "build the example app first (swift build): \(AppProcess.binary.path) is missing")
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let writer = try AppProcess(directory: directory.path)
        defer { writer.stop() }
        let reader = try AppProcess(directory: directory.path)
        defer { reader.stop() }
        let started = await eventually(within: .seconds(60)) { writer.port != nil && reader.port != nil }
        try #require(started, "the apps did not start:\n\(writer.printed)\n\(reader.printed)")
        let writerPort = try #require(writer.port)
        let readerPort = try #require(reader.port)
        #expect(writerPort != readerPort)
        #expect(writer.process.processIdentifier != reader.process.processIdentifier)

        // Absent in the reader, then written by the writer and read by the reader.
        #expect(try await Self.request(.get, "/kv/greeting", port: readerPort).status == .noContent)
        let put = try await Self.request(.put, "/kv/greeting?ttl=60", port: writerPort, body: "hello from the writer")
        #expect(put.status == .ok)
        let seen = try await eventually {
            try await Self.request(.get, "/kv/greeting", port: readerPort).body == "hello from the writer"
        }
        #expect(seen, "the reader never saw the writer's value")
        let ttl = try await Self.request(.get, "/kv/greeting/ttl", port: readerPort)
        #expect((Int(ttl.body) ?? -1) > 50 && (Int(ttl.body) ?? 100) <= 60, "ttl read by the reader: \(ttl.body)")

        // The reader cannot create what the writer created; a remove in the reader is seen by the writer.
        #expect(try await Self.request(.post, "/kv/greeting", port: readerPort, body: "other").status == .conflict)
        #expect(try await Self.request(.delete, "/kv/greeting", port: readerPort).status == .noContent)
        #expect(try await Self.request(.get, "/kv/greeting", port: writerPort).status == .noContent)
        #expect(try await Self.request(.post, "/kv/greeting", port: writerPort, body: "second").status == .created)
        #expect(try await Self.request(.get, "/kv/greeting", port: readerPort).body == "second")

        // Both still serve after all this, and shut down gracefully on SIGTERM.
        writer.stop()
        reader.stop()
        #expect(writer.process.terminationStatus == 0, "writer:\n\(writer.printed)")
        #expect(reader.process.terminationStatus == 0, "reader:\n\(reader.printed)")
    }
}
