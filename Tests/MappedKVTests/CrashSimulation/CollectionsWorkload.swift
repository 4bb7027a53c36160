import Foundation
import MappedKVCollections

@testable import MappedKV

/// The collections workload of the crash-state explorer: indexed puts, removals and unique
/// conflicts in a bucket of a collection store, and the check that a crash state keeps the
/// bucket's entries, indexes, uniqueness and count in step.
enum CollectionsWorkload {
    static let bucketName = "b"

    /// Records the workload on a fresh collection store in `directory`.
    static func record(in directory: String, seed: UInt64) throws -> ExplorerRecording {
        var random = SplitMix64(seed: seed ^ "collections".hashValueStable)
        let recorder = ExplorerRecorder(directory: directory, key: nil)
        let collections = try CollectionStore(id: "s", directory: directory)
        // Opening marks the store as a collection store: any state opens with the markers.
        recorder.replaceInitialState(try contents(of: collections.store))
        let bucket = collections.bucket(bucketName, of: Int.self)
        try bucket.addIndex("v", type: .int, source: .metadata("v"))
        recorder.acknowledge(try contents(of: collections.store))
        try bucket.addIndex("u", type: .string, source: .metadata("u"), unique: true)
        recorder.acknowledge(try contents(of: collections.store))
        for step in 0..<120 {
            let key = "k\(random.next() % 16)"
            switch random.next() % 10 {
            case 0..<7:
                let value = Int(random.next() % 5)
                // Unique values drawn from a small set, so some puts conflict and change nothing.
                let unique = "u\(random.next() % 24)"
                do {
                    try bucket.put(
                        step, forKey: key, metadata: ["v": .int(Int64(value)), "u": .string(unique)])
                } catch .uniqueConflict {}
            default: _ = try bucket.remove(key)
            }
            recorder.acknowledge(try contents(of: collections.store))
            if random.next() % 9 == 0 {
                try collections.store.sync()
                recorder.durabilityPoint()
            }
        }
        collections.close()
        recorder.durabilityPoint()
        return recorder.finish()
    }

    /// Opens the collection store in `directory` and checks the bucket's invariants; returns
    /// the raw contents, the crash-loss and recovery reports, and any broken invariant.
    static func open(
        _ directory: String, configuration: Configuration
    ) throws -> (contents: [String: [UInt8]], lost: CrashLossReport?, recovered: RecoveryReport?, problems: [String]) {
        let collections = try CollectionStore(id: "s", directory: directory, configuration: configuration)
        defer { collections.close() }
        let bucket = collections.bucket(bucketName, of: Int.self)
        var problems: [String] = []
        let entries = try bucket.entries()
        if try bucket.count != entries.count {
            problems.append("count \(try bucket.count) for \(entries.count) entries")
        }
        if try bucket.keys().sorted() != entries.map(\.key).sorted() { problems.append("keys and entries differ") }
        let definitions = try bucket.indexDefinitions().map(\.name).sorted()
        if !definitions.isEmpty {
            for value in 0..<5 {
                let indexed = try bucket.count(where: [.equal("v", .int(Int64(value)))])
                let scanned = entries.filter { $0.metadata["v"] == .int(Int64(value)) }.count
                if indexed != scanned { problems.append("index v=\(value) counts \(indexed), entries \(scanned)") }
            }
            var owners: [MetadataValue: String] = [:]
            for entry in entries {
                guard let unique = entry.metadata["u"] else { continue }
                if let other = owners.updateValue(entry.key, forKey: unique) {
                    problems.append("unique value \(unique) held by \(other) and \(entry.key)")
                }
            }
        }
        return (
            try contents(of: collections.store), collections.store.crashLossReport, collections.store.recoveryReport,
            problems
        )
    }
}
