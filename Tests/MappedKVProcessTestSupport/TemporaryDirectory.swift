import Foundation
import Testing

/// A unique, freshly created directory under the system temporary directory, removed by
/// ``with(_:)`` when the test body returns or throws.
package struct TemporaryDirectory: Sendable {
    /// The directory's URL.
    package let url: URL

    /// The directory's path.
    package var path: String { url.path }

    /// Creates a new, empty, uniquely named directory.
    package init() throws {
        url = FileManager.default.temporaryDirectory
            .appendingPathComponent("MappedKVProcessTests-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    /// Runs `body` with a new temporary directory and removes the directory afterwards.
    package static func with<T>(_ body: (TemporaryDirectory) throws -> T) throws -> T {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        return try body(directory)
    }

    /// The path of `name` inside the directory (not created).
    package func path(_ name: String) -> String { url.appendingPathComponent(name).path }

    /// A new, empty subdirectory named `name`.
    package func makeDirectory(_ name: String) throws -> String {
        let path = path(name)
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    /// Writes `contents` to the file `name` in the directory and returns its path.
    @discardableResult
    package func write(_ contents: String, to name: String) throws -> String {
        let path = path(name)
        try Data(contents.utf8).write(to: URL(fileURLWithPath: path))
        return path
    }

    /// Copies every file of the directory `source` into a new subdirectory `name` and returns its path.
    /// The copies are made writable, whatever the permissions of the originals.
    package func copyStore(from source: String, as name: String = "root") throws -> String {
        let destination = try makeDirectory(name)
        let fileManager = FileManager.default
        for file in try fileManager.contentsOfDirectory(atPath: source) {
            let bytes = try Data(contentsOf: URL(fileURLWithPath: source).appendingPathComponent(file))
            let target = URL(fileURLWithPath: destination).appendingPathComponent(file)
            try bytes.write(to: target)
            try fileManager.setAttributes([.posixPermissions: 0o600], ofItemAtPath: target.path)
        }
        return destination
    }

    /// Removes the directory and everything in it.
    package func remove() {
        try? FileManager.default.removeItem(at: url)
    }
}

/// Runs an async test body with a temporary directory removed afterwards.
package func withTemporaryDirectory<T>(_ body: (TemporaryDirectory) async throws -> T) async throws -> T {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    return try await body(directory)
}
