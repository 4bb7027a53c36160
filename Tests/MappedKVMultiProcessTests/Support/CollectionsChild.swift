import Foundation
import MappedKVProcessTestSupport

/// A running `mappedkv collections-child`: a process that keeps a collection store open and
/// applies one bucket operation per line sent, answering each with one line.
final class CollectionsChild {
    let process = Process()
    private let input = Pipe()
    private let output = Pipe()
    private var buffered = Data()

    /// Starts the child on `store` (the store options) and waits for its "ready".
    init(_ store: [String]) throws {
        process.executableURL = try CLI.binary.get()
        process.arguments = ["collections-child", "--create"] + store
        process.standardInput = input
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        let ready = try readLine()
        guard ready == "ready" else { throw ChildFailed(line: ready) }
    }

    /// Sends one operation (its fields joined by tabs) and returns the child's answer.
    func send(_ fields: [String]) throws -> String {
        try input.fileHandleForWriting.write(contentsOf: Data((fields.joined(separator: "\t") + "\n").utf8))
        return try readLine()
    }

    /// The next line the child prints; throws if it exits first.
    private func readLine() throws -> String {
        while true {
            if let newline = buffered.firstIndex(of: UInt8(ascii: "\n")) {
                let line = String(decoding: buffered[buffered.startIndex..<newline], as: UTF8.self)
                buffered = Data(buffered[(newline + 1)...])
                return line
            }
            let chunk = output.fileHandleForReading.availableData
            guard !chunk.isEmpty else { throw ChildFailed(line: String(decoding: buffered, as: UTF8.self)) }
            buffered.append(chunk)
        }
    }

    /// Closes the child's input and waits for it to exit; returns its exit status.
    @discardableResult
    func finish() -> Int32 {
        try? input.fileHandleForWriting.close()
        _ = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return process.terminationStatus
    }

    struct ChildFailed: Error, CustomStringConvertible {
        var line: String
        var description: String { "collections-child ended or failed; last output: \(line)" }
    }
}
