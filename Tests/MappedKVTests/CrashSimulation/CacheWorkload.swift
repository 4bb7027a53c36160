import Foundation

@testable import MappedKV
@testable import MappedKVCache

/// The disk cache's workload for the crash-state explorer: inline and file values, removals and
/// trims, with `sync()` as the durability point; and the cache's contract for a crash state.
enum CacheWorkload {
    static let keys = (0..<16).map { "c\($0)" }
    static let configuration = DiskCacheConfiguration(inlineThreshold: 64, trimInterval: nil)

    /// Records the workload on a fresh cache in `directory` (its manifest is store `manifest`).
    static func record(in directory: String, seed: UInt64) throws -> ExplorerRecording {
        var random = SplitMix64(seed: seed ^ "cache".hashValueStable)
        let recorder = ExplorerRecorder(directory: directory, id: DiskCache.manifestID, key: nil)
        let cache = try DiskCache(directory: directory, configuration: configuration)
        var model: [String: [UInt8]] = [:]
        for step in 0..<120 {
            let key = keys[Int(random.next() % UInt64(keys.count))]
            switch random.next() % 10 {
            case 0..<4, 4..<8:
                // Up to the inline threshold in the manifest, past it in a value file of its own.
                let length = random.next() % 2 == 0 ? Int(random.next() % 60) + 1 : Int(random.next() % 3000) + 100
                let value = Array("\(step):".utf8) + (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ step) }
                try cache.set(value, forKey: key)
                model[key] = value
            case 8:
                try cache.removeValue(forKey: key)
                model[key] = nil
            default:
                _ = try cache.trim()
            }
            recorder.acknowledge(model)
            if random.next() % 9 == 0 {
                try cache.sync()
                recorder.durabilityPoint()
            }
        }
        cache.close()
        recorder.durabilityPoint()
        return recorder.finish()
    }

    /// Opens the cache in `directory`; returns what each key reads and the manifest's reports.
    static func open(_ directory: String) throws -> CrashStateExplorer.Opened {
        let cache = try DiskCache(directory: directory, configuration: configuration)
        defer { cache.close() }
        var contents: [String: [UInt8]] = [:]
        for key in keys { contents[key] = try cache.value(forKey: key) }
        return CrashStateExplorer.Opened(
            contents: contents, lost: cache.manifest.crashLossReport, recovered: cache.manifest.recoveryReport,
            problems: [])
    }

    /// The cache's contract for a crash state: a key reads one of the values it held from the
    /// last durability point to the operation under way (never other bytes), and a key whose value
    /// did not change in that span reads that value (a key written since may read as a miss: its
    /// new value's file may be lost, and the old one was deleted).
    static func violations(_ loaded: [String: [UInt8]], allowed: [[String: [UInt8]]]) -> [String] {
        var problems: [String] = []
        for key in keys {
            let held = allowed.map { $0[key] }
            if let value = loaded[key], !held.contains(value) {
                problems.append("\(key) reads \(value.count) bytes it did not hold since the durability point")
            }
            if loaded[key] == nil, let first = held.first, let value = first, held.allSatisfy({ $0 == value }) {
                problems.append("\(key) reads as a miss, though it held the same value since the durability point")
            }
        }
        return problems
    }
}
