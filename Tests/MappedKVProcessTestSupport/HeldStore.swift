import Foundation
import Testing

/// A `mappedkv hold` child process: keeps a store open (or locked) until ``release()``.
package final class HeldStore {
    package let process = Process()
    private let input = Pipe()
    private let output = Pipe()
    private let errorFile: String
    private let scratch: TemporaryDirectory

    /// Starts `mappedkv hold` with `arguments` and waits until it reports that it holds the store.
    /// Throws if it exits first (its standard error is in the message).
    package init(_ arguments: [String]) throws {
        scratch = try TemporaryDirectory()
        errorFile = try scratch.write("", to: "stderr")
        process.executableURL = try CLI.binary.get()
        process.arguments = ["hold", "--create"] + arguments
        process.standardInput = input
        process.standardOutput = output
        process.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: errorFile))
        try process.run()
        var seen = Data()
        while !String(decoding: seen, as: UTF8.self).contains("ready\n") {
            let chunk = output.fileHandleForReading.availableData
            if chunk.isEmpty {
                process.waitUntilExit()
                throw HoldFailed(stderr: (try? String(contentsOfFile: errorFile, encoding: .utf8)) ?? "")
            }
            seen.append(chunk)
        }
    }

    /// What the child printed after "ready" (complete once ``release()`` returned).
    package private(set) var laterOutput = ""

    /// Closes the child's standard input and waits for it to exit; returns its exit status.
    @discardableResult
    package func release() -> Int32 {
        try? input.fileHandleForWriting.close()
        laterOutput = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        scratch.remove()
        return process.terminationStatus
    }

    package struct HoldFailed: Error, CustomStringConvertible {
        package var stderr: String
        package var description: String { "mappedkv hold exited before holding the store: \(stderr)" }
    }
}
