// Helpers shared by the disk cache suites (model, damage, encryption, limits, concurrency): a
// seeded generator, directory listings and snapshots, raw file edits, and a pid no process has.
// Everything is prefixed `Disk` so that it cannot clash with other suites in this module.
import Foundation
import Glibc
import MappedKVCache
import Testing

/// SplitMix64: a small seeded generator, so every random sequence can be replayed from its seed.
struct DiskTestRandom: RandomNumberGenerator {
    private var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    mutating func bytes(_ count: Int) -> [UInt8] {
        (0..<count).map { _ in UInt8.random(in: 0...255, using: &self) }
    }
}

/// File-system helpers for the disk cache tests.
enum DiskFixtures {
    /// The names in a folder, sorted; empty if it does not exist.
    static func names(in path: String) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []).sorted()
    }

    /// Every file and folder under `root` (relative paths) with the bytes of each file (nil for folders).
    ///
    /// The manifest's shared-memory lock file (`manifest.lock`) is listed with its size only: its
    /// bytes are lock state (the lock word, and the number of the last instance that released it),
    /// which every open and every write changes as a `flock` changes the kernel's lock table, not
    /// content a "changes nothing" comparison is about.
    static func tree(_ root: String) -> [String: [UInt8]?] {
        var result: [String: [UInt8]?] = [:]
        guard let walker = FileManager.default.enumerator(atPath: root) else { return result }
        while let relative = walker.nextObject() as? String {
            let path = root + "/" + relative
            var isFolder: ObjCBool = false
            _ = FileManager.default.fileExists(atPath: path, isDirectory: &isFolder)
            if relative == "manifest.lock" {
                result[relative] = .some(Array("size \(contents(path)?.count ?? 0)".utf8))
                continue
            }
            result[relative] = isFolder.boolValue ? .some(nil) : .some(contents(path) ?? [])
        }
        return result
    }

    static func contents(_ path: String) -> [UInt8]? {
        FileManager.default.contents(atPath: path).map { [UInt8]($0) }
    }

    static func write(_ bytes: [UInt8], to path: String) throws {
        try Data(bytes).write(to: URL(fileURLWithPath: path))
    }

    /// The name of the value file in `directory`/files whose value (after the 6-byte plain header) is `value`.
    static func plainFileName(holding value: [UInt8], in directory: String) -> String? {
        names(in: directory + "/files").first { name in
            guard let bytes = contents(directory + "/files/" + name), bytes.count == 6 + value.count else {
                return false
            }
            return Array(bytes[6...]) == value
        }
    }

    /// Whether `bytes` contains `needle` anywhere.
    static func contains(_ bytes: [UInt8], _ needle: [UInt8]) -> Bool {
        guard !needle.isEmpty, bytes.count >= needle.count else { return needle.isEmpty }
        for start in 0...(bytes.count - needle.count) where bytes[start] == needle[0] {
            if bytes[start..<(start + needle.count)].elementsEqual(needle) { return true }
        }
        return false
    }

    /// A pid that no process has now (kill(pid, 0) fails with ESRCH).
    static func deadPid() -> Int32 {
        for pid in stride(from: Int32(999_999), to: 100_000, by: -7) where kill(pid, 0) != 0 && errno == ESRCH {
            return pid
        }
        return 999_999
    }

    /// Bytes free on the file system holding `path`, as trim computes it.
    static func freeSpace(_ path: String) -> Int {
        var info = statvfs()
        guard statvfs(path, &info) == 0 else { return 0 }
        return Int(info.f_bavail) * Int(info.f_frsize)
    }
}

extension CacheError {
    /// Whether this is a ``CacheError/store(_:)`` error.
    var isStore: Bool {
        if case .store = self { return true }
        return false
    }
}

/// Polls `condition` until it holds or `seconds` pass: for what a background task does, which
/// has no completion to wait on from outside. The final answer is the condition's.
func eventually(within seconds: Double, _ condition: () throws -> Bool) async throws -> Bool {
    let deadline = ContinuousClock.now + .milliseconds(Int(seconds * 1000))
    while ContinuousClock.now < deadline {
        if try condition() { return true }
        try await Task.sleep(for: .milliseconds(5))
    }
    return try condition()
}
