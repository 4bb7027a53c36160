// A copy of the package's example app running as a real child process on a loopback port of its
// own. Invariants: the port is the one the app reports it bound (it is started on port 0), learned
// by polling its output with a deadline; and `stop()` ends the child, by SIGTERM and then SIGKILL
// if it does not exit in time (`kill()` by SIGKILL at once), so no test leaves a server behind.

import Foundation
import Glibc
import Synchronization

/// The example app, started as a child process serving on 127.0.0.1.
final class ExampleAppProcess {
    /// The child.
    private let process: Process
    /// Everything the child printed so far, for the port and for failure messages.
    private let output: PrintedText
    /// The port the app bound.
    let port: Int

    /// The built example app: next to the test bundle (`.build/debug/`), where `swift build` puts it.
    static func executable() throws -> URL {
        let testBinary = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
        var candidates = [testBinary.deletingLastPathComponent().appendingPathComponent("VaporMappedKVExample")]
        let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent()
        candidates.append(packageRoot.appendingPathComponent(".build/debug/VaporMappedKVExample"))
        for candidate in candidates where FileManager.default.isExecutableFile(atPath: candidate.path) {
            return candidate
        }
        throw ExampleAppError("the example app is not built; run `swift build` first (looked in \(candidates))")
    }

    /// Starts the example app on a free loopback port with its directory set to `directory` and
    /// `extraEnvironment` added to its environment, and waits (up to `timeout`) until it says
    /// which port it bound.
    init(directory: String, extraEnvironment: [String: String] = [:], timeout: Duration = .seconds(60)) throws {
        let process = Process()
        process.executableURL = try Self.executable()
        process.arguments = ["serve", "--hostname", "127.0.0.1", "--port", "0"]
        var environment = ProcessInfo.processInfo.environment
        environment["MAPPEDKV_DIRECTORY"] = directory
        environment["LOG_LEVEL"] = "notice"
        environment["MAPPEDKV_EXAMPLE_TEST_ROUTES"] = "1"
        environment.merge(extraEnvironment) { _, extra in extra }
        process.environment = environment
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        let output = PrintedText()
        pipe.fileHandleForReading.readabilityHandler = { handle in
            let data = handle.availableData
            guard !data.isEmpty else {
                handle.readabilityHandler = nil  // the end of the output: stop listening
                return
            }
            output.text.withLock { $0 += String(decoding: data, as: UTF8.self) }
        }
        try process.run()
        self.process = process
        self.output = output
        let deadline = ContinuousClock.now + timeout
        var port: Int?
        while port == nil {
            port = output.text.withLock { Self.boundPort(in: $0) }
            if port == nil {
                guard process.isRunning, ContinuousClock.now < deadline else {
                    if process.isRunning { process.terminate() }
                    let printed = output.text.withLock { $0 }
                    throw ExampleAppError("the example app did not report its port; it printed:\n\(printed)")
                }
                Thread.sleep(forTimeInterval: 0.02)  // polling the child's output, with a deadline
            }
        }
        self.port = port ?? 0
    }

    /// The base URL of the app.
    var baseURL: String { "http://127.0.0.1:\(port)" }

    /// What the child printed so far.
    var printed: String { output.text.withLock { $0 } }

    /// Ends the child: SIGTERM, then SIGKILL after five seconds.
    func stop() {
        guard process.isRunning else { return }
        process.terminate()
        let deadline = ContinuousClock.now + .seconds(5)
        while process.isRunning, ContinuousClock.now < deadline { Thread.sleep(forTimeInterval: 0.02) }
        if process.isRunning { Glibc.kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
    }

    /// Kills the child with SIGKILL, as a crash would end it, and waits for it to exit.
    func kill() {
        guard process.isRunning else { return }
        Glibc.kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }

    /// Whether the child was ended by SIGKILL.
    var wasKilled: Bool {
        !process.isRunning && process.terminationReason == .uncaughtSignal && process.terminationStatus == SIGKILL
    }

    /// The port in Vapor's "Server started on http://127.0.0.1:PORT" line, if printed.
    static func boundPort(in text: String) -> Int? {
        guard let range = text.range(of: "Server started on http://127.0.0.1:") else { return nil }
        let digits = text[range.upperBound...].prefix { $0.isNumber }
        let rest = text[range.upperBound...].dropFirst(digits.count)
        guard !digits.isEmpty, !rest.isEmpty else { return nil }  // wait until the line is complete
        return Int(digits)
    }
}

/// What a child printed, appended by the pipe's reader and read by the test.
final class PrintedText: Sendable {
    /// The text so far.
    let text = Mutex("")
}

/// A failure to run the example app.
struct ExampleAppError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
