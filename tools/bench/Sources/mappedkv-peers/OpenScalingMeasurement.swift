import Foundation

/// The open-scaling measurements of a store the bench drives itself (``OpenScalingStore``).
/// Generic over the store and called with the concrete type, as ``Workloads`` is, so that each
/// store's loops are specialized; the loops are those of the peer comparison (the prebuilt key
/// array indexed by i, one store call), and every value read is checked.
///
/// Key i is `int-<i>` and holds the Int32 i, except where ``firstGetAfterCompaction`` has a
/// writer overwrite keys, which it does in a copy of the store.
enum OpenScalingMeasurement {
    /// Opens a new store in the empty `directory`, sets keys 0..<n to their values in key order
    /// and closes it: nanoseconds per set.
    @inline(never)
    static func fill<S: OpenScalingStore>(_: S.Type, keys: [String], n: Int, directory: String) throws -> Double {
        let store = try S(directory: directory)
        let elapsed = try Clock.measure {
            for i in 0..<n { try store.setInt32(WorkloadData.intValue(i), forKey: keys[i]) }
        }
        try store.close()
        return elapsed / Double(n)
    }

    /// Reads the store's files into the page cache, then opens the store and gets one random key
    /// (untimed, so that this process's code and heap are warm too), then `opens` times: open and
    /// get one random key (timed), close (untimed). The median, in nanoseconds.
    @inline(never)
    static func openFirstGet<S: OpenScalingStore>(
        _: S.Type, keys: [String], n: Int, directory: String, opens: Int, random: inout SplitMix64
    ) throws -> Double {
        try PageCache.warm(directory)
        var samples: [Double] = []
        for attempt in 0...opens {
            let index = pick(n, &random)
            var value: Int32?
            var store: S?
            let elapsed = try Clock.measure {
                let opened = try S(directory: directory)
                store = opened
                value = try opened.int32(forKey: keys[index])
            }
            try store?.close()
            try check(value, index: index, name: "\(S.kind.displayName) open and first get")
            if attempt > 0 { samples.append(elapsed) }
        }
        return Statistics.median(samples)
    }

    /// Runs `command(key)` `runs` times after one untimed run, each a fresh process that opens the
    /// store and prints the value of one random key (checked). The median wall time, in nanoseconds.
    static func freshProcess(
        n: Int, keys: [String], runs: Int, random: inout SplitMix64, name: String,
        command: (String) -> (executable: String, arguments: [String])
    ) throws -> Double {
        var samples: [Double] = []
        for attempt in 0...runs {
            let index = pick(n, &random)
            let (executable, arguments) = command(keys[index])
            let outcome = try ChildRun.run(executable, arguments)
            try check(
                Int32(outcome.output.trimmingCharacters(in: .whitespacesAndNewlines)), index: index,
                name: "\(name) in a fresh process")
            if attempt > 0 { samples.append(outcome.nanoseconds) }
        }
        return Statistics.median(samples)
    }

    /// The memory of a second process: with `holds`, this process opens the store and gets one key,
    /// then a child (``OpenScalingChild``, `read`) opens the same store, gets `gets` random keys
    /// and reports its memory; this process closes the store once the child has exited. Without
    /// `holds` (single-process MappedKV, whose open excludes every other), the child is alone.
    @inline(never)
    static func secondProcess<S: OpenScalingStore>(
        _: S.Type, keys: [String], n: Int, directory: String, gets: Int, holds: Bool, random: inout SplitMix64
    ) throws -> SecondProcessMemory {
        let holder = holds ? try S(directory: directory) : nil
        defer { try? holder?.close() }
        let index = pick(n, &random)
        if let holder {
            try check(try holder.int32(forKey: keys[index]), index: index, name: "\(S.kind.displayName) holder's get")
        }
        let outcome = try ChildRun.run(
            try OpenScalingChild.executable(),
            OpenScalingChild.arguments(
                .read, store: S.kind, directory: directory, n: n, gets: gets, seed: random.next()))
        return try SecondProcessMemory(parsing: outcome.output)
    }

    /// Steady-state gets on a store this function opens (so that the handle has made no write since
    /// its open, unless `writesFirst`): one untimed pass over the keys in key order (a warm-up),
    /// then one timed pass in key order and one in `shuffled`'s order. Nanoseconds per get.
    ///
    /// With `writesFirst`, the handle first sets key 0 to its own value (untimed), so that the gets
    /// run after a write, as in a process that writes: a MappedKV open that reads through its
    /// mappings loads its private state at its first write. The store then holds one more record.
    @inline(never)
    static func gets<S: OpenScalingStore>(
        _: S.Type, keys: [String], shuffled: [String], n: Int, directory: String, writesFirst: Bool = false
    ) throws -> (sequential: Double, random: Double) {
        precondition(shuffled.count == n)
        let store = try S(directory: directory)
        defer { try? store.close() }
        if writesFirst { try store.setInt32(WorkloadData.intValue(0), forKey: keys[0]) }
        let expected = WorkloadData.expectedSum(n)
        let name = S.kind.displayName
        var warm: Int64 = 0
        for i in 0..<n { warm &+= Int64(try store.int32(forKey: keys[i]) ?? 0) }
        var sequential: Int64 = 0
        let sequentialTime = try Clock.measure {
            for i in 0..<n { sequential &+= Int64(try store.int32(forKey: keys[i]) ?? 0) }
        }
        var shuffledSum: Int64 = 0
        let randomTime = try Clock.measure {
            for i in 0..<n { shuffledSum &+= Int64(try store.int32(forKey: shuffled[i]) ?? 0) }
        }
        for (pass, sum) in [("warm-up", warm), ("key-order", sequential), ("random-order", shuffledSum)]
        where sum != expected {
            throw BenchError("\(name): the \(pass) gets summed \(sum), expected \(expected)")
        }
        return (sequentialTime / Double(n), randomTime / Double(n))
    }

    /// A reader's first get after another process rewrote the store. In a copy of the store (so
    /// that the next round finds it as built; ``OpenScalingStore/adoptCopy(directory:)`` makes its
    /// index file describe the copy): this process opens it and gets one key; a child
    /// (``OpenScalingChild``, `overwrite`) overwrites every tenth key i with ~i and calls
    /// ``OpenScalingStore/writeBack()`` (for MappedKV a full write-back, `trim()`), and exits;
    /// then this process gets one random overwritten key (timed, its new value checked: the
    /// reader caught up). Nanoseconds.
    @inline(never)
    static func firstGetAfterCompaction<S: OpenScalingStore>(
        _: S.Type, keys: [String], n: Int, directory: String, random: inout SplitMix64
    ) throws -> Double {
        let copy = "\(directory)-compaction"
        try Scratch.remove(copy)
        try FileManager.default.copyItem(atPath: directory, toPath: copy)
        defer { try? Scratch.remove(copy) }
        try S.adoptCopy(directory: copy)
        let reader = try S(directory: copy)
        defer { try? reader.close() }
        let before = pick(n, &random)
        try check(try reader.int32(forKey: keys[before]), index: before, name: "\(S.kind.displayName) reader's get")
        _ = try ChildRun.run(
            try OpenScalingChild.executable(),
            OpenScalingChild.arguments(.overwrite, store: S.kind, directory: copy, n: n, seed: random.next()))
        let index = pick(n / OpenScalingChild.overwriteStride, &random) * OpenScalingChild.overwriteStride
        var value: Int32?
        let elapsed = try Clock.measure { value = try reader.int32(forKey: keys[index]) }
        guard value == OpenScalingChild.overwrittenValue(index) else {
            throw BenchError(
                "\(S.kind.displayName): after the writer's compaction \(keys[index]) read \(value.map(String.init) ?? "nothing"), "
                    + "expected \(OpenScalingChild.overwrittenValue(index))")
        }
        return elapsed
    }

    /// A random index in 0..<n.
    static func pick(_ n: Int, _ random: inout SplitMix64) -> Int {
        Int(random.next().multipliedFullWidth(by: UInt64(n)).high)
    }

    /// Fails unless `value` is key `index`'s value.
    static func check(_ value: Int32?, index: Int, name: String) throws {
        guard value == WorkloadData.intValue(index) else {
            throw BenchError("\(name): int-\(index) read \(value.map(String.init) ?? "nothing"), expected \(index)")
        }
    }
}

/// What the second process reported (``OpenScalingMeasurement/secondProcess``), in kilobytes:
/// after its open and gets, and before the open (after a warm-up on a tiny store of the same kind).
struct SecondProcessMemory {
    var anonymous: Int
    var privateTotal: Int
    var privateClean: Int
    var total: Int
    var anonymousBefore: Int
    var privateBefore: Int

    /// The child's line: `name=value` fields separated by spaces.
    init(parsing line: String) throws {
        var fields: [String: Int] = [:]
        for field in line.split(whereSeparator: \.isWhitespace) {
            let parts = field.split(separator: "=", maxSplits: 1)
            if parts.count == 2, let value = Int(parts[1]) { fields[String(parts[0])] = value }
        }
        guard let anonymous = fields["rss_anon_kb"], let privateTotal = fields["private_kb"],
            let privateClean = fields["private_clean_kb"], let total = fields["vm_rss_kb"],
            let anonymousBefore = fields["rss_anon_before_kb"],
            let privateBefore = fields["private_before_kb"]
        else { throw BenchError("the second process printed \(line.debugDescription)") }
        self.anonymous = anonymous
        self.privateTotal = privateTotal
        self.privateClean = privateClean
        self.total = total
        self.anonymousBefore = anonymousBefore
        self.privateBefore = privateBefore
    }
}
