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
    /// The disk workloads on 100-byte values, in `directory` (subdirectories `small`,
    /// `small-random` and `trim`): `disk_set`, `disk_open`, `disk_get` and `statistics` over the
    /// first `n` keys, their random-order variants, then `trim` of a separate cache of
    /// `trimEntries` entries down to half. Throws if any value read back or any count is wrong.
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
        let reopened = try setReopenAndGet(C.self, data: data, n: n, directory: small, results: &results)
        var totals = CacheTotals(count: 0, bytes: 0)
        results[.statistics] = try Clock.measure { totals = try reopened.statistics() }
        guard totals.count == n, totals.bytes >= n * CacheData.valueSize else {
            throw BenchError(
                "\(name): statistics reported \(totals.count) entries of \(totals.bytes) bytes, expected \(n)")
        }
        try reopened.close()
        results.merge(try runRandom(C.self, data: data, n: n, directory: directory)) { $1 }

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

    /// The set and get rows of a plain value store (the MappedKV floor of the disk rows), in
    /// `directory`: `disk_set`, `disk_open` and `disk_get` as ``runDisk(_:data:n:trimEntries:directory:)``
    /// times them, then their random-order variants.
    @inline(never)
    static func runStore<S: BenchValueStore>(
        _: S.Type, data: CacheData, n: Int, directory: String
    ) throws
        -> CacheFigures
    {
        var results: CacheFigures = [:]
        let reopened = try setReopenAndGet(S.self, data: data, n: n, directory: "\(directory)/small", results: &results)
        try reopened.close()
        settle()
        let again = try S(directory: "\(directory)/small")
        results[.diskGetFloor] = try timeFloorGets(again, keys: Array(data.keys[0..<n]))
        try again.close()
        results[.diskSetFloor] = try timeFloorSets(S.self, data: data, n: n, directory: "\(directory)/floor")
        results.merge(try runRandom(S.self, data: data, n: n, directory: directory)) { $1 }
        return results
    }

    /// `disk_set_floor`: `n` sets into an empty store in `directory`, each of the value behind a
    /// 16-byte header under the key with a 2-byte prefix (made untimed), after the value's CRC-32
    /// and a clock reading, then an update of two counters in a mapped page; ns per set.
    @inline(never)
    static func timeFloorSets<S: BenchValueStore>(
        _: S.Type, data: CacheData, n: Int, directory: String
    ) throws
        -> Double
    {
        let keys = data.keys[0..<n].map { "e:" + $0 }
        let records = data.values[0..<n].map { [UInt8](repeating: 0, count: 16) + $0 }
        let values = data.values
        guard let counters = mmap(nil, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0),
            counters != MAP_FAILED
        else { throw BenchError("disk_set_floor: mmap failed") }
        defer { munmap(counters, 4096) }
        let store = try S(directory: directory)
        settle()
        var crcs: UInt32 = 0
        let elapsed = try Clock.measure {
            for i in 0..<n {
                crcs ^= values[i].withUnsafeBytes { CRC32.update(0, $0) }
                var now = timespec()
                clock_gettime(CLOCK_REALTIME_COARSE, &now)  // the clock DiskCache reads by default
                try store.set(records[i], forKey: keys[i])
                let count = counters.load(as: Int.self) + 1
                let bytes = counters.load(fromByteOffset: 8, as: Int.self) + values[i].count
                counters.storeBytes(of: count, as: Int.self)
                counters.storeBytes(of: bytes, toByteOffset: 8, as: Int.self)
                // The time read is kept, as a set keeps it in its record.
                counters.storeBytes(of: now.tv_nsec, toByteOffset: 16, as: Int.self)
            }
        }
        let stored = counters.load(as: Int.self)
        let storedBytes = counters.load(fromByteOffset: 8, as: Int.self)
        for i in stride(from: 0, to: n, by: max(1, n / 1_000)) {
            guard let record = try store.value(forKey: keys[i]), record == records[i] else {
                throw BenchError("\(S.self): disk_set_floor: \(keys[i]) does not read back (CRCs \(crcs))")
            }
        }
        try store.close()
        guard stored == n, storedBytes == values[0..<n].reduce(0, { $0 + $1.count }) else {
            throw BenchError("\(S.self): disk_set_floor: \(stored) sets and \(storedBytes) bytes counted for \(n) sets")
        }
        return elapsed / Double(n)
    }

    /// `disk_get_floor`: gets of every key of `keys` (each present; checked), each also taking the
    /// CRC-32 of the value and noting the key and the time in a log under a lock; ns per get. Not
    /// inlined, so that callgrind counts it apart.
    @inline(never)
    static func timeFloorGets<S: BenchValueStore>(_ store: S, keys: [String]) throws -> Double {
        let log = AccessNoteFloor()
        var bytes = 0
        var tags: UInt64 = 0
        var crcs: UInt32 = 0
        let elapsed = try Clock.measure {
            for i in 0..<keys.count {
                if let value = try store.value(forKey: keys[i]) {
                    crcs ^= value.withUnsafeBytes { CRC32.update(0, $0) }
                    log.note(keys[i])
                    bytes += value.count
                    tags &+= CacheData.tag(value)
                }
            }
        }
        guard log.noted == keys.count else {
            throw BenchError("\(S.self): disk_get_floor: \(log.noted) notes for \(keys.count) gets (CRCs \(crcs))")
        }
        try check(
            "\(S.self)", CacheWorkload.diskGetFloor.rawValue, bytes: bytes, tags: tags, count: keys.count,
            size: CacheData.valueSize)
        return elapsed / Double(keys.count)
    }

    /// `disk_set`: `n` sets into an empty store in `directory`; `disk_open`: its close and reopen;
    /// `disk_get`: `n` gets right after (checked). Returns the reopened store.
    @inline(__always)
    static func setReopenAndGet<S: BenchValueStore>(
        _: S.Type, data: CacheData, n: Int, directory: String, results: inout CacheFigures
    ) throws -> S {
        let keys = data.keys
        let values = data.values
        let store = try S(directory: directory)
        settle()
        results[.diskSet] =
            try Clock.measure {
                for i in 0..<n { try store.set(values[i], forKey: keys[i]) }
            } / Double(n)
        try store.close()

        settle()
        var opened: S?
        results[.diskOpen] = try Clock.measure { opened = try S(directory: directory) }
        guard let reopened = opened else { throw BenchError("\(S.self): the reopen returned nothing") }
        results[.diskGet] = try timeGets(reopened, keys: Array(keys[0..<n]), workload: .diskGet)
        return reopened
    }

    /// The random-order rows, in `directory`: `disk_get_random`: the `n` entries `small` holds
    /// read in a seeded random order right after a reopen (checked); `disk_set_random`: the sets
    /// of `disk_set` in another seeded random order, into an empty store in `small-random` (a
    /// sample of them read back, untimed).
    @inline(never)
    static func runRandom<S: BenchValueStore>(
        _: S.Type, data: CacheData, n: Int, directory: String
    ) throws
        -> CacheFigures
    {
        var results: CacheFigures = [:]
        let readKeys = RandomOrder.shuffled(Array(data.keys[0..<n]), seed: RandomOrder.getSeed)
        settle()
        let reopened = try S(directory: "\(directory)/small")
        results[.diskGetRandom] = try timeGets(reopened, keys: readKeys, workload: .diskGetRandom)
        try reopened.close()

        let order = RandomOrder.permutation(n, seed: RandomOrder.setSeed)
        let keys = order.map { data.keys[$0] }
        let values = order.map { data.values[$0] }
        let store = try S(directory: "\(directory)/small-random")
        settle()
        results[.diskSetRandom] =
            try Clock.measure {
                for i in 0..<n { try store.set(values[i], forKey: keys[i]) }
            } / Double(n)
        for i in stride(from: 0, to: n, by: max(1, n / 1_000)) {
            let index = order[i]
            guard let value = try store.value(forKey: data.keys[index]), CacheData.tag(value) == UInt64(index) else {
                throw BenchError("\(S.self): disk_set_random: \(data.keys[index]) does not read back")
            }
        }
        try store.close()
        return results
    }

    /// Gets of every key of `keys` (each present; checked), in ns per get.
    @inline(__always)
    static func timeGets<S: BenchValueStore>(_ store: S, keys: [String], workload: CacheWorkload) throws -> Double {
        var bytes = 0
        var tags: UInt64 = 0
        let elapsed = try Clock.measure {
            for i in 0..<keys.count {
                if let value = try store.value(forKey: keys[i]) {
                    bytes += value.count
                    tags &+= CacheData.tag(value)
                }
            }
        }
        try check(
            "\(S.self)", workload.rawValue, bytes: bytes, tags: tags, count: keys.count, size: CacheData.valueSize)
        return elapsed / Double(keys.count)
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

    /// `large_get_floor`: the values of `runLarge` set into a new ``PlainFileStore`` in
    /// `directory` and read back after a reopen, each value's CRC-32 taken right after its read
    /// (checked against the value's own); µs per value.
    static func runLargeFloor(data: CacheData, directory: String) throws -> CacheFigures {
        let keys = data.largeKeys
        let values = data.largeValues
        let expected = values.map { value in value.withUnsafeBytes { CRC32.update(0, $0) } }
        let path = "\(directory)/large-floor"
        let store = try PlainFileStore(directory: path)
        for i in 0..<keys.count { try store.set(values[i], forKey: keys[i]) }
        try store.close()
        let reopened = try PlainFileStore(directory: path)
        settle()
        var crcs: [UInt32] = []
        crcs.reserveCapacity(keys.count)
        var bytes = 0
        var tags: UInt64 = 0
        let elapsed = try Clock.measure {
            for i in 0..<keys.count {
                if let value = try reopened.value(forKey: keys[i]) {
                    crcs.append(value.withUnsafeBytes { CRC32.update(0, $0) })
                    bytes += value.count
                    tags &+= CacheData.tag(value)
                }
            }
        }
        try reopened.close()
        guard crcs == expected else { throw BenchError("large_get_floor: a value's CRC-32 differs from its own") }
        try check(
            "PlainFileStore", CacheWorkload.largeGetFloor.rawValue, bytes: bytes, tags: tags, count: keys.count,
            size: CacheData.largeSize)
        return [.largeGetFloor: elapsed / Double(keys.count)]
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
