// Proves that a DiskCache behaves exactly like a simple reference model (a dictionary plus an LRU
// order by the later of modification and last access) over 1,000 random, seeded and replayable
// operation sequences of set (inline and file sizes, TTLs, extended data), get, remove,
// removeAll, clock advances, trims with random count/byte/age limits, flushes and reopens: after
// every step the values, misses, `entries()` order and sizes, `statistics()` and the files on
// disk agree with the model, there are no orphans, and a trim leaves the cache within its limits.
import Foundation
import MappedKVCache
import Testing

@Suite struct DiskCacheModelTests {
    static let blocks = Array(0..<4)  // run in parallel: 4 x 250 = 1,000 sequences
    static let sequencesPerBlock = 250

    @Test(arguments: blocks)
    func randomSequencesAgreeWithTheModel(block: Int) async throws {
        for index in 0..<Self.sequencesPerBlock {
            var run = try ModelRun(seed: 0xCAC4E_0000 + UInt64(block * Self.sequencesPerBlock + index))
            try run.run()
            await Task.yield()  // let other suites' tasks (background trims) run between sequences
        }
    }
}

/// One step of a random sequence.
private enum CacheOperation: CustomStringConvertible {
    case set(key: String, value: [UInt8], timeToLive: UInt64?, extendedData: [UInt8]?)
    case get(key: String, withMetadata: Bool)
    case remove(key: String)
    case removeAll
    case advance(milliseconds: UInt64)
    case trim(count: Int?, bytes: Int?, age: UInt64?, freeSpace: Int?)
    case flush
    case reopen(inlineThreshold: Int, flushInterval: UInt64)

    var description: String {
        switch self {
        case .set(let key, let value, let ttl, let extended):
            "set \(key) size=\(value.count) ttl=\(ttl.map(String.init) ?? "-") "
                + "ext=\(extended.map { "\($0.count)" } ?? "-")"
        case .get(let key, let metadata): metadata ? "entry \(key)" : "get \(key)"
        case .remove(let key): "remove \(key)"
        case .removeAll: "removeAll"
        case .advance(let milliseconds): "advance \(milliseconds) ms"
        case .trim(let count, let bytes, let age, let free):
            "trim count=\(count.map(String.init) ?? "-") bytes=\(bytes.map(String.init) ?? "-") "
                + "age=\(age.map(String.init) ?? "-") free=\(free.map(String.init) ?? "-")"
        case .flush: "flushAccessTimes"
        case .reopen(let threshold, let interval): "reopen threshold=\(threshold) flush=\(interval) ms"
        }
    }

    static let keys = (0..<8).map { "k\($0)" }

    static func random(_ random: inout DiskTestRandom) -> CacheOperation {
        let key = keys.randomElement(using: &random)!
        switch Int.random(in: 0..<100, using: &random) {
        case 0..<30:
            let size =
                Bool.random(using: &random)
                ? [0, 1, 16, 63, 64, 65, 100, 160].randomElement(using: &random)!
                : Int.random(in: 0...200, using: &random)
            let ttl: UInt64? =
                Int.random(in: 0..<10, using: &random) < 6
                ? nil : [0, 1, 500, 1_000, 2_500, 4_000].randomElement(using: &random)!
            let extended: [UInt8]? =
                switch Int.random(in: 0..<10, using: &random) {
                case 0..<6: nil
                case 6: []
                default: random.bytes(Int.random(in: 1...12, using: &random))
                }
            return .set(key: key, value: random.bytes(size), timeToLive: ttl, extendedData: extended)
        case 30..<55: return .get(key: key, withMetadata: Bool.random(using: &random))
        case 55..<63: return .remove(key: key)
        case 63..<65: return .removeAll
        case 65..<80:
            let milliseconds: UInt64 =
                Bool.random(using: &random)
                ? [0, 1, 499, 500, 1_000].randomElement(using: &random)! : UInt64.random(in: 0...3_000, using: &random)
            return .advance(milliseconds: milliseconds)
        case 80..<90:
            return .trim(
                count: Bool.random(using: &random) ? Int.random(in: 0...8, using: &random) : nil,
                bytes: Bool.random(using: &random) ? Int.random(in: 0...600, using: &random) : nil,
                age: Bool.random(using: &random) ? randomAge(&random) : nil,
                freeSpace: Int.random(in: 0..<4, using: &random) == 0 ? 0 : nil)
        case 90..<93: return .flush
        default: return randomReopen(&random)
        }
    }

    /// An age limit, often a round one that falls exactly on an entry's last access.
    static func randomAge(_ random: inout DiskTestRandom) -> UInt64 {
        Bool.random(using: &random)
            ? [0, 500, 1_000, 1_500, 2_000, 3_000].randomElement(using: &random)!
            : UInt64.random(in: 0...5_000, using: &random)
    }

    static func randomReopen(_ random: inout DiskTestRandom) -> CacheOperation {
        .reopen(
            inlineThreshold: [64, 64, 64, 16, 100].randomElement(using: &random)!,
            flushInterval: [0, 500, 1_000, 60_000].randomElement(using: &random)!)
    }
}

/// What the model knows of one entry.
private struct ModelEntry {
    var value: [UInt8]
    var modified: UInt64
    var expiry: UInt64?
    var extendedData: [UInt8]?
    var isInline: Bool
    /// The later of the modification and the last hit.
    var lastAccess: UInt64

    func isExpired(at now: UInt64) -> Bool { expiry.map { $0 <= now } ?? false }
}

/// A difference between the cache and the model, with the sequence that led to it.
private struct ModelMismatch: Error, CustomStringConvertible {
    var description: String
}

/// One random sequence: the cache, the model, and the checks between them.
private struct ModelRun {
    let seed: UInt64
    var random: DiskTestRandom
    let clock = ManualClock()
    let directory = CacheTestDirectory("model")
    var inlineThreshold = 64
    var flushInterval: UInt64 = 1_000
    var cache: DiskCache
    var model: [String: ModelEntry] = [:]
    var trace: [String] = []

    init(seed: UInt64) throws {
        self.seed = seed
        random = DiskTestRandom(seed: seed)
        if case .reopen(let threshold, let interval) = CacheOperation.randomReopen(&random) {
            inlineThreshold = threshold
            flushInterval = interval
        }
        cache = try Self.open(directory.path, clock, inlineThreshold, flushInterval)
    }

    static func open(
        _ path: String, _ clock: ManualClock, _ threshold: Int, _ interval: UInt64
    ) throws -> DiskCache {
        let configuration = DiskCacheConfiguration(
            inlineThreshold: threshold, accessTimeFlushInterval: .milliseconds(interval), clock: clock.cacheClock)
        return try DiskCache(directory: path, configuration: configuration)
    }

    mutating func run() throws {
        trace.append("open threshold=\(inlineThreshold) flush=\(flushInterval) ms")
        for _ in 0..<Int.random(in: 20...60, using: &random) {
            let operation = CacheOperation.random(&random)
            trace.append(operation.description)
            do {
                try perform(operation)
                try checkState()
            } catch let mismatch as ModelMismatch {
                throw mismatch
            } catch {
                try expect("\(error)", "no error", "a call threw")
            }
        }
        let problems = try cache.verify().filter { !$0.hasSuffix("unfinished removeAll deletion") }
        try expect(problems, [], "verify() at the end")
        cache.close()
    }

    func expect<T: Equatable>(_ actual: T, _ expected: T, _ what: String) throws {
        guard actual != expected else { return }
        throw ModelMismatch(
            description: "seed \(seed): \(what): got \(actual), expected \(expected)\nsequence:\n  "
                + trace.joined(separator: "\n  "))
    }

    // MARK: Operations

    mutating func perform(_ operation: CacheOperation) throws {
        let now = clock.now
        switch operation {
        case .set(let key, let value, let ttl, let extended):
            try cache.set(value, forKey: key, timeToLive: ttl.map { .milliseconds($0) }, extendedData: extended)
            model[key] = ModelEntry(
                value: value, modified: now, expiry: ttl.map { now + $0 }, extendedData: extended,
                isInline: value.count <= inlineThreshold, lastAccess: now)
        case .get(let key, let withMetadata):
            if model[key]?.isExpired(at: now) == true { model[key] = nil }  // a read drops an expired entry
            let expected = model[key]
            if withMetadata {
                let entry = try cache.entry(forKey: key)
                try expect(entry?.value, expected?.value, "entry(\(key)).value")
                try expect(entry?.key, expected.map { _ in key }, "entry(\(key)).key")
                try expect(entry?.modified, expected?.modified, "entry(\(key)).modified")
                try expect(entry?.expiry, expected?.expiry, "entry(\(key)).expiry")
                try expect(entry?.extendedData, expected?.extendedData, "entry(\(key)).extendedData")
            } else {
                try expect(try cache.value(forKey: key), expected?.value, "value(\(key))")
            }
            model[key]?.lastAccess = max(expected?.lastAccess ?? 0, now)
        case .remove(let key):
            try cache.removeValue(forKey: key)
            model[key] = nil
        case .removeAll:
            try cache.removeAll()
            model = [:]
        case .advance(let milliseconds):
            clock.advance(by: milliseconds)
        case .trim(let count, let bytes, let age, let free):
            let limits = DiskCacheLimits(
                count: count, bytes: bytes, age: age.map { .milliseconds($0) }, freeSpace: free)
            let report = try cache.trim(to: limits)
            let (removed, removedBytes) = trimModel(count: count, bytes: bytes, age: age, now: now)
            try expect(report.ran, true, "trim ran")
            try expect(report.removedEntries, removed, "trim removedEntries")
            try expect(report.removedBytes, removedBytes, "trim removedBytes")
            try expect(report.damagedEntries, 0, "trim damagedEntries")
            try checkLimits(count: count, bytes: bytes, age: age, now: now)
        case .flush:
            try cache.flushAccessTimes()
        case .reopen(let threshold, let interval):
            cache.close()
            inlineThreshold = threshold
            flushInterval = interval
            cache = try Self.open(directory.path, clock, threshold, interval)
        }
    }

    /// The model's trim: expired and too old entries, then least recently used first until the
    /// count and byte limits hold. Returns what it removed.
    mutating func trimModel(count: Int?, bytes: Int?, age: UInt64?, now: UInt64) -> (Int, Int) {
        var removed = 0
        var removedBytes = 0
        let oldest = age.map { now - min(now, $0) }
        var kept: [(key: String, entry: ModelEntry)] = []
        for (key, entry) in lruOrder(model) {
            if entry.isExpired(at: now) || oldest.map({ entry.lastAccess < $0 }) == true {
                model[key] = nil
                removed += 1
                removedBytes += entry.value.count
            } else {
                kept.append((key, entry))
            }
        }
        var total = kept.reduce(0) { $0 + $1.entry.value.count }
        for (key, entry) in kept {
            let overCount = count.map { model.count > $0 } ?? false
            let overBytes = bytes.map { total > $0 } ?? false
            guard overCount || overBytes else { break }
            model[key] = nil
            removed += 1
            removedBytes += entry.value.count
            total -= entry.value.count
        }
        return (removed, removedBytes)
    }

    func lruOrder(_ entries: [String: ModelEntry]) -> [(key: String, entry: ModelEntry)] {
        entries.map { (key: $0.key, entry: $0.value) }.sorted {
            ($0.entry.lastAccess, $0.key) < ($1.entry.lastAccess, $1.key)
        }
    }

    // MARK: Checks

    /// The limits hold, read from the cache itself.
    func checkLimits(count: Int?, bytes: Int?, age: UInt64?, now: UInt64) throws {
        let statistics = try cache.statistics()
        if let count { try expect(statistics.count <= count, true, "count \(statistics.count) within \(count)") }
        if let bytes { try expect(statistics.bytes <= bytes, true, "bytes \(statistics.bytes) within \(bytes)") }
        if let age {
            let stale = try cache.entries().filter { $0.lastAccess < now - min(now, age) }.map(\.key)
            try expect(stale, [], "entries older than the age limit")
        }
    }

    /// Everything observable without a side effect agrees with the model.
    func checkState() throws {
        let now = clock.now
        let live = model.filter { !$0.value.isExpired(at: now) }
        let expected = lruOrder(live).map { key, entry in
            "\(key) size=\(entry.value.count) inline=\(entry.isInline) last=\(entry.lastAccess) "
                + "expiry=\(entry.expiry.map(String.init) ?? "-")"
        }
        let actual = try cache.entries().map { info in
            "\(info.key) size=\(info.size) inline=\(info.isInline) last=\(info.lastAccess) "
                + "expiry=\(info.expiry.map(String.init) ?? "-")"
        }
        try expect(actual, expected, "entries()")
        for key in CacheOperation.keys {
            try expect(try cache.contains(key), live[key] != nil, "contains(\(key))")
        }

        // Trash folders of removeAll are deleted in the background: count them around the call.
        let trashBefore = DiskFixtures.names(in: directory.file("trash")).count
        let statistics = try cache.statistics()
        let trashAfter = DiskFixtures.names(in: directory.file("trash")).count
        try expect(statistics.count, model.count, "statistics().count")
        try expect(statistics.bytes, model.values.reduce(0) { $0 + $1.value.count }, "statistics().bytes")
        let inline = model.values.filter(\.isInline).count
        try expect(statistics.inlineCount, inline, "statistics().inlineCount")
        try expect(statistics.fileCount, model.count - inline, "statistics().fileCount")
        try expect(
            (trashAfter...max(trashAfter, trashBefore)).contains(statistics.orphanCount), true,
            "statistics().orphanCount \(statistics.orphanCount), trash folders \(trashBefore)...\(trashAfter)")
        try expect(DiskFixtures.names(in: directory.file("files")).count, model.count - inline, "files in files/")
        try expect(DiskFixtures.names(in: directory.file("tmp")), [], "files in tmp/")
    }
}
