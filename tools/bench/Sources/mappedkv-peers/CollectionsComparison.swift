import CMalloc
import Foundation
import MappedKV
import MappedKVCollections

/// MappedKVCollections against the SQLite design it replaces, on one bucket of `n` posts with an
/// int index and a date index: put, a page of 20 by the date index after a random time, a count of
/// a likes range, open (with MappedKV's index build), and MappedKV's index memory. Rounds
/// alternate the designs; every figure is the median over rounds of each round's median.
struct CollectionsComparison {
    var n: Int
    var runs: Int
    var root: String
    var pageQueries = 2_000
    var countQueries = 200
    var designs = ["mappedkv", "sqlite"]
    var extraPuts = 20_000

    struct Round {
        var putNanoseconds: Double
        var putEncodedNanoseconds: Double
        var pageNanoseconds: Double
        var pageEncodedNanoseconds: Double
        var countNanoseconds: Double
        var eitherPageNanoseconds: Double
        var openNanoseconds: Double
        var indexBytesPerEntry: Double?
        /// The first page of keys after the open (MappedKV orders the bucket's keys in memory then).
        var firstKeysPageNanoseconds = Double.nan
        var keysPageNanoseconds = Double.nan
        var countAllNanoseconds = Double.nan
    }

    static let base = Date(timeIntervalSince1970: 1_700_000_000)

    static func post(_ number: Int, likes: Int) -> BenchPost {
        BenchPost(
            id: number, likes: likes, posted: base.addingTimeInterval(Double(number)), title: "Post number \(number)")
    }

    /// The index of the first element of `sorted` that is `isAfter` (which must hold for a suffix
    /// of it), or its count if none is.
    static func firstIndex(in sorted: [String], where isAfter: (String) -> Bool) -> Int {
        var low = 0
        var high = sorted.count
        while low < high {
            let middle = (low + high) / 2
            if isAfter(sorted[middle]) { high = middle } else { low = middle + 1 }
        }
        return low
    }

    func run(progress: (String) -> Void) throws -> [String: [Round]] {
        var results: [String: [Round]] = ["mappedkv": [], "sqlite": []]
        for round in 0..<runs {
            for design in designs {
                progress("collections round \(round + 1)/\(runs): \(design), n = \(n)")
                let directory = try Scratch.directory("\(root)/collections-\(design)-\(round)")
                defer { try? Scratch.remove(directory) }
                results[design, default: []].append(try measure(design, directory: directory, seed: UInt64(round + 1)))
            }
        }
        return results
    }

    private func open(_ design: String, _ directory: String, fresh: Bool) throws -> any CollectionsDesign {
        design == "mappedkv"
            ? try MappedKVCollectionsDesign(directory: directory, createIndexes: fresh)
            : try SQLiteCollectionsDesign(directory: directory)
    }

    private func measure(_ design: String, directory: String, seed: UInt64) throws -> Round {
        var generator = SeededGenerator(seed: seed)
        let likes = (0..<n).map { _ in Int(generator.next() % 10_000) }
        var store: any CollectionsDesign = try open(design, directory, fresh: true)
        // The store is filled with values encoded beforehand, in random key order, in chunks of up to
        // 10,000 puts (a round's figure is the median chunk); then 20,000 more puts of new keys
        // go through the Codable path, JSON encoding included.
        var order = Array(0..<n)
        order.shuffle(using: &generator)
        let encoder = PostJSON.encoder()
        var putEncodedSamples: [Double] = []
        let chunk = max(1, min(10_000, n / 10))
        var index = 0
        while index < n {
            let end = min(index + chunk, n)
            let values = try order[index..<end].map { number in
                let post = Self.post(number, likes: likes[number])
                return (number, post, [UInt8](try encoder.encode(post)))
            }
            let time = try Clock.measure {
                for (number, post, bytes) in values {
                    try store.putEncoded(bytes, key: "p\(number)", likes: post.likes, posted: post.posted)
                }
            }
            putEncodedSamples.append(time / Double(end - index))
            index = end
        }
        var putSamples: [Double] = []
        for start in stride(from: n, to: n + extraPuts, by: 2_000) {
            let time = try Clock.measure {
                for number in start..<(start + 2_000) {
                    try store.put(Self.post(number, likes: Int(generator.next() % 10_000)), key: "p\(number)")
                }
            }
            putSamples.append(time / 2_000)
        }
        try store.close()
        // Nothing of the first open may stay alive: the reopen must load and build from the files.
        store = EmptyDesign()

        // Open: MappedKV loads the store and builds both indexes; SQLite opens and prepares.
        let memoryBefore = design == "mappedkv" ? try plainResident(directory) : nil
        let openTime = try Clock.measure { store = try open(design, directory, fresh: false) }
        var bytesPerEntry: Double?
        if let (plain, handle) = memoryBefore {
            bytesPerEntry = Double(Self.heapInUse() - plain) / Double(2 * (n + extraPuts))
            handle.close()
        }
        let firstPage = try store.page(postedAfter: Self.base, limit: 20)
        guard firstPage.count == min(20, n), firstPage.first?.id == 1 || n < 2 else {
            throw BenchError("\(design): the first page is wrong: \(firstPage.map(\.id))")
        }

        let total = n + extraPuts
        var pageSamples: [Double] = []
        var pageEncodedSamples: [Double] = []
        for query in 0..<(2 * pageQueries) {
            let after = Self.base.addingTimeInterval(Double(generator.next() % UInt64(max(1, n - 20))))
            var count = 0
            if query % 2 == 0 {
                pageSamples.append(try Clock.measure { count = try store.page(postedAfter: after, limit: 20).count })
            } else {
                pageEncodedSamples.append(
                    try Clock.measure { count = try store.pageEncoded(postedAfter: after, limit: 20).count })
            }
            guard count == 20 || total < 40 else { throw BenchError("\(design): a page of \(count)") }
        }
        // An OR of two index ranges, a page of 20 by posted: likes in a window of 100 values (about
        // 1% of the posts, spread over all times) OR posted in a window of 1,000 seconds at a random time.
        var eitherSamples: [Double] = []
        for _ in 0..<pageQueries {
            let low = Int(generator.next() % 9_900)
            let start = Self.base.addingTimeInterval(Double(generator.next() % UInt64(max(1, n - 1_000))))
            var count = 0
            eitherSamples.append(
                try Clock.measure {
                    count = try store.pageEither(
                        likes: low...(low + 99), posted: start...start.addingTimeInterval(1_000), limit: 20
                    ).count
                })
            guard count == 20 || total < 2_000 else { throw BenchError("\(design): an OR page of \(count)") }
        }
        var countSamples: [Double] = []
        for _ in 0..<countQueries {
            let low = Int(generator.next() % 9_000)
            let high = low + 1 + Int(generator.next() % 1_000)
            var counted = 0
            countSamples.append(try Clock.measure { counted = try store.count(likesFrom: low, below: high) })
            guard counted > 0 || high - low < 10 else { throw BenchError("\(design): counted \(counted)") }
        }
        // Pages of 20 keys by key, each after a random key, and counts of the whole bucket.
        let firstKeysPageTime = try Clock.measure { _ = try store.keysPage(after: nil, limit: 20) }
        // Every key in UTF-8 order, so that each page is checked against the keys that follow its
        // cursor (fewer than 20 near the last key, "p9999" for N = 20,000, "p99999" for 100,000).
        let orderedKeys = (0..<total).map { "p\($0)" }.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
        var keysSamples: [Double] = []
        for _ in 0..<pageQueries {
            let after = "p\(generator.next() % UInt64(total))"
            var keys: [String] = []
            keysSamples.append(try Clock.measure { keys = try store.keysPage(after: after, limit: 20) })
            let next = Self.firstIndex(in: orderedKeys) { after.utf8.lexicographicallyPrecedes($0.utf8) }
            guard keys[...] == orderedKeys[next..<min(next + 20, orderedKeys.count)] else {
                throw BenchError("\(design): a keys page after \(after) of \(keys.count): \(keys.prefix(3))")
            }
        }
        var countAllSamples: [Double] = []
        for _ in 0..<countQueries {
            var counted = 0
            countAllSamples.append(try Clock.measure { counted = try store.countAll() })
            guard counted == total else { throw BenchError("\(design): counted \(counted) of \(total) entries") }
        }
        try store.close()
        var round = Round(
            putNanoseconds: Statistics.median(putSamples), putEncodedNanoseconds: Statistics.median(putEncodedSamples),
            pageNanoseconds: Statistics.median(pageSamples),
            pageEncodedNanoseconds: Statistics.median(pageEncodedSamples),
            countNanoseconds: Statistics.median(countSamples),
            eitherPageNanoseconds: Statistics.median(eitherSamples), openNanoseconds: openTime,
            indexBytesPerEntry: bytesPerEntry)
        round.firstKeysPageNanoseconds = firstKeysPageTime
        round.keysPageNanoseconds = Statistics.median(keysSamples)
        round.countAllNanoseconds = Statistics.median(countAllSamples)
        return round
    }

    /// The resident memory with the store open as plain MappedKV (its records loaded, no index),
    /// and that handle: a collection store opened next shares the loaded records, so what it adds
    /// is the indexes.
    /// The heap bytes in use (glibc's `mallinfo2()`: the arena's and the mmapped blocks'): memory
    /// held, not memory freed but kept by the allocator, which resident-set figures would count.
    static func heapInUse() -> Int { Int(bench_heap_in_use()) }

    private func plainResident(_ directory: String) throws -> (Int, MappedKV) {
        var configuration = Configuration()
        configuration.storeKind = CollectionStore.kind
        let handle = try MappedKV(id: "feed", directory: directory, configuration: configuration)
        _ = try handle.count
        return (Self.heapInUse(), handle)
    }

    static func markdown(_ results: [String: [Round]], n: Int, runs: Int) -> String {
        func median(_ design: String, _ value: (Round) -> Double) -> Double {
            results[design, default: []].isEmpty ? .nan : Statistics.median(results[design, default: []].map(value))
        }
        func row(_ name: String, _ value: (Round) -> Double, unit: String, scale: Double) -> String {
            let ours = median("mappedkv", value) / scale
            let theirs = results["sqlite", default: []].isEmpty ? .nan : median("sqlite", value) / scale
            return "| \(name) | \(String(format: "%.2f", ours)) \(unit) | \(String(format: "%.2f", theirs)) \(unit) | "
                + "\(String(format: "%.1f", theirs / ours))x |\n"
        }
        var text =
            "\n## Collections: \(n) posts in one bucket, two indexes (likes: int, posted: date), \(runs) rounds\n\n"
        text += "| workload | MappedKVCollections | SQLite design | SQLite / MappedKV |\n|---|---|---|---|\n"
        text += row(
            "put, value encoded beforehand (store and both indexes)", { $0.putEncodedNanoseconds }, unit: "us",
            scale: 1_000)
        text += row("put of a Codable value (JSONEncoder included)", { $0.putNanoseconds }, unit: "us", scale: 1_000)
        text += row(
            "page of 20 by posted after a time, values as stored", { $0.pageEncodedNanoseconds }, unit: "us",
            scale: 1_000)
        text += row(
            "page of 20, values decoded (JSONDecoder included)", { $0.pageNanoseconds }, unit: "us", scale: 1_000)
        text += row(
            "or page of 20: likes range OR posted range, by posted, values as stored", { $0.eitherPageNanoseconds },
            unit: "us", scale: 1_000)
        text += row("count of a likes range", { $0.countNanoseconds }, unit: "us", scale: 1_000)
        text += row("keys page of 20 after a random key", { $0.keysPageNanoseconds }, unit: "us", scale: 1_000)
        text += row(
            "first keys page after open (MappedKV: orders the keys)", { $0.firstKeysPageNanoseconds }, unit: "ms",
            scale: 1_000_000)
        text += row("count of the bucket", { $0.countAllNanoseconds }, unit: "us", scale: 1_000)
        text += row("open (MappedKV: load and build the indexes)", { $0.openNanoseconds }, unit: "ms", scale: 1_000_000)
        let samples = results["mappedkv", default: []].compactMap(\.indexBytesPerEntry)
        let bytes = samples.isEmpty ? .nan : Statistics.median(samples)
        text += "\nMappedKVCollections index memory: \(String(format: "%.1f", bytes)) bytes per index entry "
        text += "(heap bytes in use that a collection store adds over the same store opened plain, glibc's "
        text += "mallinfo2, arena and mmapped blocks, over 2 x the entries; the key table shared by the two indexes "
        text += "included).\n"
        return text
    }
}

/// A placeholder between a close and the next open.
final class EmptyDesign: CollectionsDesign {
    func put(_ post: BenchPost, key: String) throws {}
    func putEncoded(_ bytes: [UInt8], key: String, likes: Int, posted: Date) throws {}
    func pageEncoded(postedAfter after: Date, limit: Int) throws -> [[UInt8]] { [] }
    func page(postedAfter after: Date, limit: Int) throws -> [BenchPost] { [] }
    func count(likesFrom low: Int, below high: Int) throws -> Int { 0 }
    func keysPage(after: String?, limit: Int) throws -> [String] { [] }
    func countAll() throws -> Int { 0 }
    func pageEither(likes: ClosedRange<Int>, posted: ClosedRange<Date>, limit: Int) throws -> [[UInt8]] { [] }
    func close() throws {}
}

/// A small seeded generator (SplitMix64).
struct SeededGenerator: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
