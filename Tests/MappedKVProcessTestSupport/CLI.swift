import Foundation
import Testing

/// What one run of the `mappedkv` binary produced.
package struct CLIResult: Sendable, CustomStringConvertible {
    /// The arguments the binary was given.
    package var arguments: [String]
    /// How the process ended: `.exit` for a normal exit, `.uncaughtSignal` for a crash.
    package var terminationReason: Process.TerminationReason
    /// The exit status, or the signal number when `terminationReason` is `.uncaughtSignal`.
    package var status: Int32
    /// Standard output, as bytes.
    package var stdoutData: Data
    /// Standard error, as bytes.
    package var stderrData: Data

    package var stdout: String { String(decoding: stdoutData, as: UTF8.self) }
    package var stderr: String { String(decoding: stderrData, as: UTF8.self) }
    /// Whether the process exited normally (no signal).
    package var exitedNormally: Bool { terminationReason == .exit }
    /// Whether the process exited normally with status 0.
    package var succeeded: Bool { exitedNormally && status == 0 }
    /// Whether the process exited normally with a non-zero status.
    package var failedCleanly: Bool { exitedNormally && status != 0 }

    package var description: String {
        let how = exitedNormally ? "exit \(status)" : "SIGNAL \(status)"
        return
            "mappedkv \(arguments.map { "'\($0)'" }.joined(separator: " ")) -> \(how)\n--- stdout:\n\(stdout)--- stderr:\n\(stderr)---"
    }
}

/// Runs the real `mappedkv` binary built next to the test bundle.
package enum CLI {
    /// The built `mappedkv` binary.
    ///
    /// SwiftPM puts the executable products in the same directory as the test bundle, so the
    /// binary is looked up next to the running test executable first (this works with any
    /// `--scratch-path`); failing that, `<package>/.build/debug/mappedkv`.
    package static let binary: Result<URL, BinaryNotFound> = {
        var candidates: [URL] = []
        if let override = ProcessInfo.processInfo.environment["MAPPEDKV_CLI_BINARY"], !override.isEmpty {
            candidates.append(URL(fileURLWithPath: override))
        }
        // On Linux the test executable is `<scratch>/<triple>/debug/<Package>PackageTests.xctest`;
        // on Darwin the bundle's executable is inside `<Package>PackageTests.xctest/Contents/MacOS/`.
        var executables: [URL] = []
        if let first = CommandLine.arguments.first, !first.isEmpty {
            executables.append(URL(fileURLWithPath: first).resolvingSymlinksInPath())
        }
        if let main = Bundle.main.executableURL { executables.append(main.resolvingSymlinksInPath()) }
        for executable in executables {
            var directory = executable.deletingLastPathComponent()
            // Walk up a few levels so the Darwin bundle layout is covered too.
            for _ in 0..<4 {
                candidates.append(directory.appendingPathComponent("mappedkv"))
                directory.deleteLastPathComponent()
            }
        }
        for bundle in Bundle.allBundles where bundle.bundlePath.hasSuffix(".xctest") {
            candidates.append(bundle.bundleURL.deletingLastPathComponent().appendingPathComponent("mappedkv"))
        }
        // …/Tests/MappedKVProcessTestSupport/CLI.swift -> package root
        var package = URL(fileURLWithPath: #filePath)
        for _ in 0..<3 { package.deleteLastPathComponent() }
        candidates.append(package.appendingPathComponent(".build/debug/mappedkv"))

        for candidate in candidates {
            var isDirectory: ObjCBool = false
            if FileManager.default.fileExists(atPath: candidate.path, isDirectory: &isDirectory),
                !isDirectory.boolValue,
                FileManager.default.isExecutableFile(atPath: candidate.path)
            {
                return .success(candidate)
            }
        }
        return .failure(BinaryNotFound(searched: candidates.map(\.path)))
    }()

    package struct BinaryNotFound: Error, CustomStringConvertible {
        package var searched: [String]
        package var description: String {
            "the mappedkv binary was not found (build it with `swift build --build-tests`); looked in:\n"
                + searched.joined(separator: "\n")
        }
    }

    /// Runs `mappedkv` with `arguments`, feeding `stdin` (or nothing) to its standard input.
    ///
    /// Standard input, output and error go through temporary files, so a large output can never
    /// fill a pipe and block the child, and a child that exits without reading its input cannot
    /// break a pipe in the test process.
    @discardableResult
    package static func run(
        _ arguments: [String], stdin: String? = nil, environment extra: [String: String] = [:]
    ) throws -> CLIResult {
        let binary = try binary.get()
        let scratch = try TemporaryDirectory()
        defer { scratch.remove() }
        let inputPath = try scratch.write(stdin ?? "", to: "stdin")
        let outputPath = try scratch.write("", to: "stdout")
        let errorPath = try scratch.write("", to: "stderr")

        let input = try FileHandle(forReadingFrom: URL(fileURLWithPath: inputPath))
        let output = try FileHandle(forWritingTo: URL(fileURLWithPath: outputPath))
        let error = try FileHandle(forWritingTo: URL(fileURLWithPath: errorPath))
        defer {
            try? input.close()
            try? output.close()
            try? error.close()
        }

        let process = Process()
        process.executableURL = binary
        process.arguments = arguments
        if !extra.isEmpty {
            process.environment = ProcessInfo.processInfo.environment.merging(extra) { $1 }
        }
        process.standardInput = input
        process.standardOutput = output
        process.standardError = error
        try process.run()
        process.waitUntilExit()

        return CLIResult(
            arguments: arguments,
            terminationReason: process.terminationReason,
            status: process.terminationStatus,
            stdoutData: try Data(contentsOf: URL(fileURLWithPath: outputPath)),
            stderrData: try Data(contentsOf: URL(fileURLWithPath: errorPath)))
    }

    /// Runs `mappedkv`, records an issue unless it exits 0, and returns the result.
    @discardableResult
    package static func succeed(
        _ arguments: [String], stdin: String? = nil, sourceLocation: SourceLocation = #_sourceLocation
    ) throws -> CLIResult {
        let result = try run(arguments, stdin: stdin)
        #expect(result.succeeded, "expected success: \(result)", sourceLocation: sourceLocation)
        return result
    }

    /// Runs `mappedkv`, records an issue unless it exits normally with a non-zero status and a
    /// non-empty message on standard error, and returns the result.
    @discardableResult
    package static func fail(
        _ arguments: [String], stdin: String? = nil, sourceLocation: SourceLocation = #_sourceLocation
    ) throws -> CLIResult {
        let result = try run(arguments, stdin: stdin)
        #expect(result.exitedNormally, "the process crashed: \(result)", sourceLocation: sourceLocation)
        #expect(result.failedCleanly, "expected a non-zero exit: \(result)", sourceLocation: sourceLocation)
        #expect(
            !result.stderr.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty,
            "expected a message on stderr: \(result)", sourceLocation: sourceLocation)
        return result
    }

    /// `--root ROOT --id ID`.
    package static func store(_ root: String, _ id: String) -> [String] { ["--root", root, "--id", id] }

    /// The `dump` output of a store, requiring success.
    package static func dump(
        root: String, id: String, sourceLocation: SourceLocation = #_sourceLocation
    ) throws -> String {
        try succeed(["dump"] + store(root, id), sourceLocation: sourceLocation).stdout
    }
}
