// Proves that one DiskCache shared by several tasks of one process, all setting, getting and
// removing the same few keys (inline and file values, plain and encrypted) while others list,
// count, trim and clear, does not crash, every read returns nil or exactly one of the values some
// task put for that key, and the cache is consistent (no orphans, files match records) afterwards.
import Foundation
import MappedKV
import MappedKVCache
import Testing

@Suite struct DiskCacheConcurrencyTests {
    static let keys = ["k0", "k1", "k2", "k3"]
    static let tasks = 4
    static let operationsPerTask = 300

    /// What one task did: the values it put and the values its reads returned, per key.
    struct Outcome: Sendable {
        var put: [String: Set<[UInt8]>] = [:]
        var read: [String: [[UInt8]]] = [:]
    }

    /// A value naming its key, writer and step (when long enough), of a size around the threshold.
    static func value(key: Int, writer: Int, step: Int, random: inout DiskTestRandom) -> [UInt8] {
        let size = [0, 3, 40, 64, 65, 200, 3_000].randomElement(using: &random)!
        let identity = [UInt8(key), UInt8(writer), UInt8(step >> 8), UInt8(step & 0xFF)]
        return Array((identity + random.bytes(max(0, size - 4))).prefix(size))
    }

    static func work(_ cache: DiskCache, writer: Int) async throws -> Outcome {
        var random = DiskTestRandom(seed: 0xC0DE + UInt64(writer))
        var outcome = Outcome()
        for step in 0..<operationsPerTask {
            let index = Int.random(in: 0..<keys.count, using: &random)
            let key = keys[index]
            switch Int.random(in: 0..<100, using: &random) {
            case 0..<40:
                let value = value(key: index, writer: writer, step: step, random: &random)
                outcome.put[key, default: []].insert(value)
                let ttl: Duration? = Int.random(in: 0..<10, using: &random) == 0 ? .seconds(60) : nil
                try cache.set(value, forKey: key, timeToLive: ttl, extendedData: [UInt8(writer)])
            case 40..<60:
                if let value = try cache.value(forKey: key) { outcome.read[key, default: []].append(value) }
            case 60..<75:
                if let entry = try cache.entry(forKey: key) {
                    outcome.read[key, default: []].append(entry.value)
                    if entry.key != key { Issue.record("entry(forKey: \(key)) returned \(entry.key)") }
                }
            case 75..<90: try cache.removeValue(forKey: key)
            case 90..<94: _ = try cache.contains(key)
            case 94..<97: _ = try cache.entries()
            case 97: _ = try cache.statistics()
            case 98: try cache.trim(toCount: 2)
            default: try cache.removeAll()
            }
            if step % 8 == 0 { await Task.yield() }
        }
        return outcome
    }

    @Test(arguments: [false, true])
    func tasksSharingOneCacheOnlyEverReadValuesThatWerePut(encrypted: Bool) async throws {
        let dir = CacheTestDirectory("concurrent")
        let key = encrypted ? CryptKey(Array("key".utf8)) : nil
        let cache = try DiskCache(
            directory: dir.path, configuration: DiskCacheConfiguration(inlineThreshold: 64, cryptKey: key))
        let outcomes = try await withThrowingTaskGroup(of: Outcome.self) { group in
            for writer in 0..<Self.tasks {
                group.addTask { try await Self.work(cache, writer: writer) }
            }
            var all: [Outcome] = []
            for try await outcome in group { all.append(outcome) }
            return all
        }
        var put: [String: Set<[UInt8]>] = [:]
        for outcome in outcomes { put.merge(outcome.put) { $0.union($1) } }
        var reads = 0
        for outcome in outcomes {
            for (key, values) in outcome.read {
                reads += values.count
                let foreign = values.filter { !(put[key]?.contains($0) ?? false) }
                #expect(foreign.isEmpty, "\(key): \(foreign.count) values read that no task put")
            }
        }
        #expect(reads > 0)

        // Consistent afterwards: every record serves its bytes, no file is unaccounted for (once
        // the background deletions of removeAll are done).
        let deadline = ContinuousClock.now + .seconds(20)
        while !DiskFixtures.names(in: dir.file("trash")).isEmpty && ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(10))
        }
        try cache.trim(to: DiskCacheLimits())
        #expect(try cache.verify() == [])
        let statistics = try cache.statistics()
        #expect(statistics.orphanCount == 0)
        #expect(DiskFixtures.names(in: dir.file("files")).count == statistics.fileCount)
        #expect(DiskFixtures.names(in: dir.file("tmp")).isEmpty)
        for key in Self.keys {
            if let value = try cache.value(forKey: key) { #expect(put[key]?.contains(value) == true) }
        }
        cache.close()
    }
}
