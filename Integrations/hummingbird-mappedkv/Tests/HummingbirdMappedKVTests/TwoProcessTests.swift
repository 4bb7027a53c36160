// Two real processes of the example app on one directory, each on its own loopback port: what one
// writes through HTTP, the other reads through HTTP, with expiry, create and remove seen across.
//
// Invariants: the children are the app binary built next to this test bundle (Support/AppProcess),
// started on port 0; every wait polls a condition against a deadline; both children are
// terminated, and killed if they linger, whatever the test does.

import Foundation
import HTTPTypes
import Testing

@Suite("Two app processes on one directory", .serialized)
struct TwoProcessTests {
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
        #expect(try await AppProcess.request(.get, "/kv/greeting", port: readerPort).status == .noContent)
        let put = try await AppProcess.request(
            .put, "/kv/greeting?ttl=60", port: writerPort, body: "hello from the writer")
        #expect(put.status == .ok)
        let seen = try await eventually {
            try await AppProcess.request(.get, "/kv/greeting", port: readerPort).body == "hello from the writer"
        }
        #expect(seen, "the reader never saw the writer's value")
        let ttl = try await AppProcess.request(.get, "/kv/greeting/ttl", port: readerPort)
        #expect((Int(ttl.body) ?? -1) > 50 && (Int(ttl.body) ?? 100) <= 60, "ttl read by the reader: \(ttl.body)")

        // The reader cannot create what the writer created; a remove in the reader is seen by the writer.
        #expect(
            try await AppProcess.request(.post, "/kv/greeting", port: readerPort, body: "other").status == .conflict)
        #expect(try await AppProcess.request(.delete, "/kv/greeting", port: readerPort).status == .noContent)
        #expect(try await AppProcess.request(.get, "/kv/greeting", port: writerPort).status == .noContent)
        #expect(
            try await AppProcess.request(.post, "/kv/greeting", port: writerPort, body: "second").status == .created)
        #expect(try await AppProcess.request(.get, "/kv/greeting", port: readerPort).body == "second")

        // Both still serve after all this, and shut down gracefully on SIGTERM.
        writer.stop()
        reader.stop()
        #expect(writer.process.terminationStatus == 0, "writer:\n\(writer.printed)")
        #expect(reader.process.terminationStatus == 0, "reader:\n\(reader.printed)")
    }
}
