import Foundation
import Testing

// Helpers for the `mappedkv cache` tests: running a subcommand on a directory, reading `stats`,
// and taking byte-for-byte snapshots of a cache directory.

/// Runs `mappedkv cache` subcommands on one cache directory.
package struct CacheCLI: Sendable {
    /// The cache's directory.
    package var dir: String
    /// Options added to every call (key options, the inline threshold).
    package var options: [String] = []

    /// The runner of the cache in `dir`, adding `options` to every call.
    package init(dir: String, options: [String] = []) {
        self.dir = dir
        self.options = options
    }

    /// `mappedkv cache SUBCOMMAND --dir DIR OPTIONS ARGUMENTS`.
    package func arguments(_ subcommand: String, _ arguments: [String]) -> [String] {
        ["cache", subcommand, "--dir", dir] + options + arguments
    }

    /// Runs a subcommand, whatever its outcome.
    @discardableResult
    package func run(
        _ subcommand: String, _ arguments: [String] = [], environment: [String: String] = [:]
    ) throws
        -> CLIResult
    {
        try CLI.run(self.arguments(subcommand, arguments), environment: environment)
    }

    /// Runs a subcommand, recording an issue unless it exits 0.
    @discardableResult
    package func succeed(
        _ subcommand: String, _ arguments: [String] = [], sourceLocation: SourceLocation = #_sourceLocation
    ) throws -> CLIResult {
        try CLI.succeed(self.arguments(subcommand, arguments), sourceLocation: sourceLocation)
    }

    /// Runs a subcommand, recording an issue unless it fails cleanly with a message.
    @discardableResult
    package func fail(
        _ subcommand: String, _ arguments: [String] = [], sourceLocation: SourceLocation = #_sourceLocation
    ) throws -> CLIResult {
        try CLI.fail(self.arguments(subcommand, arguments), sourceLocation: sourceLocation)
    }

    /// Stores the bytes of `value` under `key` through a file (`put --file`).
    package func put(
        _ key: String, bytes value: [UInt8], in scratch: TemporaryDirectory, _ extra: [String] = [],
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        let path = scratch.path("value-\(UUID().uuidString)")
        try Data(value).write(to: URL(fileURLWithPath: path))
        try succeed("put", extra + [key, "--file", path], sourceLocation: sourceLocation)
    }

    /// The value of `key` as `get` writes it to standard output, or nil on a miss (`not found`,
    /// exit 1); records an issue for any other outcome.
    package func get(_ key: String, sourceLocation: SourceLocation = #_sourceLocation) throws -> [UInt8]? {
        let result = try run("get", [key])
        if result.succeeded { return [UInt8](result.stdoutData) }
        #expect(
            result.exitedNormally && result.status == 1 && result.stderr == "not found\n" && result.stdoutData.isEmpty,
            "expected a value or a miss: \(result)", sourceLocation: sourceLocation)
        return nil
    }

    /// The `stats` counts by name, requiring success and exactly the five lines.
    package func stats(sourceLocation: SourceLocation = #_sourceLocation) throws -> [String: Int] {
        let result = try succeed("stats", sourceLocation: sourceLocation)
        var counts: [String: Int] = [:]
        for line in result.stdout.split(separator: "\n") {
            let words = line.split(separator: " ")
            if words.count == 2, let value = Int(words[1]) { counts[String(words[0])] = value }
        }
        let names = result.stdout.split(separator: "\n").map { String($0.split(separator: " ").first ?? "") }
        #expect(names == ["count", "bytes", "inline", "files", "orphans"], "\(result)", sourceLocation: sourceLocation)
        return counts
    }

    /// The names in the cache's `files/` folder.
    package func valueFiles() throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: dir + "/files").sorted()
    }
}

/// Every file and folder under a directory with the bytes of the files, for byte-for-byte comparisons.
///
/// The manifest's shared-memory lock file (`manifest.lock`) is recorded by its size only: its bytes
/// are lock state (the lock word, and the number of the last instance that released it), which every
/// open and write changes as a `flock` changes the kernel's lock table, not the cache's content.
package struct DirectorySnapshot: Equatable, CustomStringConvertible {
    /// Relative path to the file's bytes, or nil for a folder.
    package var entries: [String: Data?]

    /// Reads everything under `root`.
    package init(_ root: String) throws {
        entries = [:]
        let fileManager = FileManager.default
        for case let relative as String in fileManager.enumerator(atPath: root) ?? .init() {
            var isDirectory: ObjCBool = false
            let path = root + "/" + relative
            guard fileManager.fileExists(atPath: path, isDirectory: &isDirectory) else { continue }
            if relative == "manifest.lock" {
                let size = try Data(contentsOf: URL(fileURLWithPath: path)).count
                entries[relative] = Data("size \(size)".utf8)
                continue
            }
            entries[relative] = isDirectory.boolValue ? .some(nil) : try Data(contentsOf: URL(fileURLWithPath: path))
        }
    }

    package var description: String {
        entries.keys.sorted().map { "\($0): \(entries[$0]!.map { "\($0.count) bytes" } ?? "folder")" }
            .joined(separator: ", ")
    }
}

/// Test values.
package enum CacheValues {
    /// Every byte value, NUL and newline included, repeated to `count` bytes.
    package static func everyByte(count: Int) -> [UInt8] { (0..<count).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ 3) } }

    /// `count` pseudo-random bytes from `seed` (reproducible).
    package static func random(count: Int, seed: UInt64) -> [UInt8] {
        var state = seed
        return (0..<count).map { _ in
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return UInt8(truncatingIfNeeded: state >> 33)
        }
    }
}
