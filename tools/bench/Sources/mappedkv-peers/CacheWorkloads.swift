import Glibc

/// One design's figures from one round: nanoseconds per operation, per value or per call.
typealias CacheFigures = [CacheWorkload: Double]

/// The timed loops of the cache comparison, generic over the design (specialized per design in a
/// release build, as ``Workloads`` is). Every loop is the same for every design: the prebuilt key
/// and value arrays indexed by i, and one call.
///
/// Before every timed phase an untimed `sync()` writes back the dirty pages of what came before
/// (the previous phase, or the previous design), so no phase pays for another's writeback.
enum CacheWorkloads {
    /// The disk workloads on 100-byte values, in `directory` (subdirectories `small` and `trim`):
    /// `disk_set`, `disk_open`, `disk_get` and `statistics` over the first `n` keys, then `trim` of a
    /// separate cache of `trimEntries` entries down to half. Throws if any value read back or any
    /// count is wrong.
    @inline(never)
    static func runDisk<C: BenchDiskCache>(
        _: C.Type, data: CacheData, n: Int, trimEntries: Int, directory: String
    ) throws -> CacheFigures {
        precondition(n <= data.keys.count && trimEntries <= data.keys.count)
        let keys = data.keys
        let values = data.values
        let name = String(describing: C.self)
        var results: CacheFigures = [:]

        let small = "\(directory)/small"
        let cache = try C(directory: small)
        settle()
        results[.diskSet] =
            try Clock.measure {
                for i in 0..<n { try cache.set(values[i], forKey: keys[i]) }
            } / Double(n)
        try cache.close()

        settle()
        var opened: C?
        results[.diskOpen] = try Clock.measure { opened = try C(directory: small) }
        guard let reopened = opened else { throw BenchError("\(name): the reopen returned nothing") }
        var bytes = 0
        var tags: UInt64 = 0
        results[.diskGet] =
            try Clock.measure {
                for i in 0..<n {
                    if let value = try reopened.value(forKey: keys[i]) {
                        bytes += value.count
                        tags &+= CacheData.tag(value)
                    }
                }
            } / Double(n)
        try check(name, "disk_get", bytes: bytes, tags: tags, count: n, size: CacheData.valueSize)
        var totals = CacheTotals(count: 0, bytes: 0)
        results[.statistics] = try Clock.measure { totals = try reopened.statistics() }
        guard totals.count == n, totals.bytes >= n * CacheData.valueSize else {
            throw BenchError(
                "\(name): statistics reported \(totals.count) entries of \(totals.bytes) bytes, expected \(n)")
        }
        try reopened.close()

        let trimDirectory = "\(directory)/trim"
        let filler = try C(directory: trimDirectory)
        for i in 0..<trimEntries { try filler.set(values[i], forKey: keys[i]) }
        try filler.close()
        let trimmed = try C(directory: trimDirectory)
        settle()
        results[.trim] = try Clock.measure { try trimmed.trim(toCount: trimEntries / 2) }
        let left = try trimmed.statistics().count
        guard left == trimEntries / 2 else {
            throw BenchError("\(name): after the trim to \(trimEntries / 2) there are \(left) entries")
        }
        try trimmed.close()
        return results
    }

    /// The large-value workloads in `directory/large`: every 1 MiB value of `data` set, then, after a
    /// reopen, read back. Figures per value.
    @inline(never)
    static func runLarge<S: BenchValueStore>(_: S.Type, data: CacheData, directory: String) throws -> CacheFigures {
        let keys = data.largeKeys
        let values = data.largeValues
        let count = keys.count
        let name = String(describing: S.self)
        var results: CacheFigures = [:]
        let large = "\(directory)/large"
        let store = try S(directory: large)
        settle()
        results[.largeSet] =
            try Clock.measure {
                for i in 0..<count { try store.set(values[i], forKey: keys[i]) }
            } / Double(count)
        try store.close()

        let reopened = try S(directory: large)
        settle()
        var bytes = 0
        var tags: UInt64 = 0
        results[.largeGet] =
            try Clock.measure {
                for i in 0..<count {
                    if let value = try reopened.value(forKey: keys[i]) {
                        bytes += value.count
                        tags &+= CacheData.tag(value)
                    }
                }
            } / Double(count)
        try reopened.close()
        try check(name, "large_get", bytes: bytes, tags: tags, count: count, size: CacheData.largeSize)
        return results
    }

    /// Writes back every dirty page of the system (untimed).
    static func settle() { sync() }

    static func check(_ name: String, _ workload: String, bytes: Int, tags: UInt64, count: Int, size: Int) throws {
        guard bytes == count * size else {
            throw BenchError("\(name): \(workload) read \(bytes) bytes, expected \(count * size)")
        }
        guard tags == CacheData.expectedTags(count) else {
            throw BenchError("\(name): \(workload) read values of the wrong keys (tags \(tags))")
        }
    }
}
