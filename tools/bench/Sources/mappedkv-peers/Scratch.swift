import Foundation

/// Benchmark directories: every store starts in a fresh, empty one.
enum Scratch {
    /// Creates `path` empty (removing whatever was there) and returns it.
    static func directory(_ path: String) throws -> String {
        let files = FileManager.default
        if files.fileExists(atPath: path) { try files.removeItem(atPath: path) }
        try files.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    /// Creates `path` if it does not exist, leaving whatever it holds, and returns it.
    static func existingDirectory(_ path: String) throws -> String {
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    /// Removes `path` and everything under it, if it exists.
    static func remove(_ path: String) throws {
        let files = FileManager.default
        if files.fileExists(atPath: path) { try files.removeItem(atPath: path) }
    }

    /// The total size of the regular files under `path`.
    static func bytes(under path: String) -> Int {
        guard let walker = FileManager.default.enumerator(atPath: path) else { return 0 }
        var total = 0
        while let name = walker.nextObject() as? String {
            if let attributes = try? FileManager.default.attributesOfItem(atPath: "\(path)/\(name)"),
                attributes[.type] as? FileAttributeType == .typeRegular,
                let size = attributes[.size] as? Int
            {
                total += size
            }
        }
        return total
    }
}
