/// The timed loops, generic over the store. Called with a concrete store type, each call is
/// specialized for that store in a release build (whole-module optimization), so the protocol adds
/// no dynamic dispatch inside the timing. Every loop is the same for every store: the prebuilt key
/// and value arrays indexed by i, and one store call.
enum Workloads {
    /// Reopens per round of `reopen_load`, averaged.
    static let reopens = 5

    /// Runs every workload on fresh stores of type `S` in `directory` (two subdirectories, `ops`
    /// and `load`), over the first `n` keys of `data`. Throws if any value read back is wrong.
    @inline(never)
    static func run<S: BenchStore>(_: S.Type, data: WorkloadData, n: Int, directory: String) throws -> RoundResult {
        precondition(n <= data.n)
        let intKeys = data.intKeys
        let stringKeys = data.stringKeys
        let strings = data.strings
        let perOp = Double(n)
        var results: [Workload: Double] = [:]

        let opsDirectory = try Scratch.directory("\(directory)/ops")
        let store = try S(directory: opsDirectory)
        results[.setInt32] =
            try Clock.measure {
                for i in 0..<n { try store.setInt32(WorkloadData.intValue(i), forKey: intKeys[i]) }
            } / perOp
        results[.setString] =
            try Clock.measure {
                for i in 0..<n { try store.setString(strings[i], forKey: stringKeys[i]) }
            } / perOp
        var sum: Int64 = 0
        results[.getInt32] =
            try Clock.measure {
                for i in 0..<n { sum &+= Int64(try store.int32(forKey: intKeys[i]) ?? 0) }
            } / perOp
        var totalBytes = 0
        results[.getString] =
            try Clock.measure {
                for i in 0..<n { totalBytes += try store.string(forKey: stringKeys[i])?.utf8.count ?? 0 }
            } / perOp
        results[.remove] =
            try Clock.measure {
                for i in 0..<n { try store.remove(forKey: intKeys[i]) }
            } / perOp

        let name = String(describing: S.self)
        let expectedSum = WorkloadData.expectedSum(n)
        let expectedBytes = data.expectedStringBytes(n)
        guard sum == expectedSum else { throw BenchError("\(name): get_int32 summed \(sum), expected \(expectedSum)") }
        guard totalBytes == expectedBytes else {
            throw BenchError("\(name): get_string read \(totalBytes) bytes, expected \(expectedBytes)")
        }
        for i in 0..<n where try store.contains(intKeys[i]) {
            throw BenchError("\(name): \(intKeys[i]) is still there after remove")
        }
        try store.close()

        let loadDirectory = try Scratch.directory("\(directory)/load")
        let loadStore = try S(directory: loadDirectory)
        for i in 0..<n { try loadStore.setInt32(WorkloadData.intValue(i), forKey: intKeys[i]) }
        try loadStore.close()
        let diskBytes = Scratch.bytes(under: loadDirectory)
        var loads: [LoadedEntries] = []
        loads.reserveCapacity(reopens)
        let loadTime = try Clock.measure {
            for _ in 0..<reopens { loads.append(try S.reopenAndLoad(directory: loadDirectory)) }
        }
        for load in loads {
            guard load.count == n else {
                throw BenchError("\(name): reopen loaded \(load.count) entries, expected \(n)")
            }
            guard load.sum == nil || load.sum == expectedSum else {
                throw BenchError("\(name): reopen summed \(load.sum ?? 0), expected \(expectedSum)")
            }
        }
        if loads.contains(where: { $0.sum == nil }) {
            // The load does not decode values: read them all back once, untimed.
            let check = try S(directory: loadDirectory)
            var reread: Int64 = 0
            for i in 0..<n { reread &+= Int64(try check.int32(forKey: intKeys[i]) ?? 0) }
            try check.close()
            guard reread == expectedSum else {
                throw BenchError("\(name): after reopen summed \(reread), expected \(expectedSum)")
            }
        }
        results[.reopenLoad] = loadTime / Double(reopens)
        return RoundResult(nanoseconds: results, diskBytes: diskBytes)
    }
}

/// One store's figures from one round.
struct RoundResult {
    /// Nanoseconds per operation; for `reopen_load`, nanoseconds per reopen.
    var nanoseconds: [Workload: Double]
    /// The size of the files of the `reopen_load` store (N Int32 keys) after it was closed.
    var diskBytes: Int
}
