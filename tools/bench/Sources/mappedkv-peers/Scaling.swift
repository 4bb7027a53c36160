import MappedKV

/// MappedKV at growing N: set and get cost, reopen-and-load time, resident memory after a load,
/// space amplification, and the cost of a full write-back (`trim()`).
///
/// Per N and round, on a fresh store of N Int32 keys `int-<i>`:
/// 1. N sets of i (timed), N gets (timed, summed and checked);
/// 2. close, then 5 reopens with `count` (timed, averaged), then the resident memory of a load in a
///    child process (``MemoryProbe``);
/// 3. reopen and overwrite every key with i + 1 (timed): the log now holds dead records;
/// 4. `trim()` (timed): the only public call that always rewrites the live records (a full
///    write-back through the journal, with fdatasync and msync), shrinking the file if it can.
struct Scaling {
    static let storeID = "scaling"
    var sizes: [Int]
    var runs: Int
    var root: String

    func run(progress: (String) -> Void) throws -> ScalingResults {
        let largest = sizes.max() ?? 0
        let keys = (0..<largest).map { "int-\($0)" }
        var results = ScalingResults(sizes: sizes, runs: runs, samples: [:])
        for round in 0..<runs {
            let order = (0..<sizes.count).map { sizes[($0 + round) % sizes.count] }
            var line = "round \(round + 1)/\(runs):"
            for n in order {
                let directory = try Scratch.directory("\(root)/scaling-\(n)")
                let start = Clock.nanoseconds()
                let sample = try Self.measure(n: n, keys: keys, directory: directory)
                try Scratch.remove(directory)
                results.samples[n, default: []].append(sample)
                line += " N=\(n) \(Format.duration(nanoseconds: Double(Clock.nanoseconds() - start)))"
            }
            progress(line)
        }
        return results
    }

    @inline(never)
    private static func measure(n: Int, keys: [String], directory: String) throws -> ScalingSample {
        var sample = ScalingSample()
        let perOp = Double(n)
        let store = try MappedKV(id: storeID, directory: directory)
        sample.setNanoseconds =
            try Clock.measure {
                for i in 0..<n { try store.set(WorkloadData.intValue(i), forKey: keys[i]) }
            } / perOp
        var sum: Int64 = 0
        sample.getNanoseconds =
            try Clock.measure {
                for i in 0..<n { sum &+= Int64(try store.int32(forKey: keys[i]) ?? 0) }
            } / perOp
        let expected = WorkloadData.expectedSum(n)
        guard sum == expected else { throw BenchError("scaling N=\(n): get summed \(sum), expected \(expected)") }
        sample.afterFill = try Space(store, keys: keys[0..<n])
        store.close()

        var loaded = 0
        sample.reopenLoadNanoseconds =
            try Clock.measure {
                for _ in 0..<Workloads.reopens {
                    let reopened = try MappedKV(id: storeID, directory: directory)
                    loaded += try reopened.count
                    reopened.close()
                }
            } / Double(Workloads.reopens)
        guard loaded == n * Workloads.reopens else {
            throw BenchError("scaling N=\(n): reopen loaded \(loaded / Workloads.reopens) keys, expected \(n)")
        }
        let probe = try MemoryProbe.measure(directory: directory, id: storeID)
        guard probe.keys == n else { throw BenchError("scaling N=\(n): the memory probe loaded \(probe.keys) keys") }
        sample.residentKiB = probe.memory
        sample.storeFilesResidentKiB = probe.storeFilesKiB

        let again = try MappedKV(id: storeID, directory: directory)
        sample.overwriteNanoseconds =
            try Clock.measure {
                for i in 0..<n { try again.set(WorkloadData.intValue(i) &+ 1, forKey: keys[i]) }
            } / perOp
        sample.beforeTrim = try Space(again, keys: keys[0..<n])
        sample.trimNanoseconds = try Clock.measure { try again.trim() }
        sample.afterTrim = try Space(again, keys: keys[0..<n])
        var overwritten: Int64 = 0
        for i in 0..<n { overwritten &+= Int64(try again.int32(forKey: keys[i]) ?? 0) }
        again.close()
        guard overwritten == expected &+ Int64(n) else {
            throw BenchError(
                "scaling N=\(n): after overwrite and trim summed \(overwritten), expected \(expected &+ Int64(n))")
        }
        return sample
    }
}

/// The sizes of a store at one moment.
struct Space {
    /// The live data: every live key's record, `varint(key length) key varint(value length) value`.
    var liveBytes: Int
    /// The data file's size.
    var fileBytes: Int
    /// The used part of the data region (live and dead records).
    var logBytes: Int
    var records: Int
    var keys: Int

    init() {
        liveBytes = 0
        fileBytes = 0
        logBytes = 0
        records = 0
        keys = 0
    }

    init(_ store: MappedKV, keys: ArraySlice<String>) throws {
        var live = 0
        for key in keys {
            guard let payload = try store.payload(forKey: key) else { throw BenchError("scaling: \(key) is missing") }
            live += Self.recordSize(keyLength: key.utf8.count, valueLength: payload.count)
        }
        let info = try store.info()
        liveBytes = live
        fileBytes = info.fileSize
        logBytes = info.actualSize
        records = info.recordCount
        self.keys = info.keyCount
    }

    /// The bytes of the record `varint(key length) key varint(value length) value`.
    static func recordSize(keyLength: Int, valueLength: Int) -> Int {
        func varintSize(_ value: Int) -> Int { max(1, (value.bitWidth - value.leadingZeroBitCount + 6) / 7) }
        return varintSize(keyLength) + keyLength + varintSize(valueLength) + valueLength
    }

    var fileAmplification: Double { Double(fileBytes) / Double(liveBytes) }
    var logAmplification: Double { Double(logBytes) / Double(liveBytes) }
}

/// One N's figures from one round.
struct ScalingSample {
    var setNanoseconds = 0.0
    var getNanoseconds = 0.0
    var reopenLoadNanoseconds = 0.0
    var overwriteNanoseconds = 0.0
    var trimNanoseconds = 0.0
    var residentKiB = ResidentMemory(total: 0, anonymous: 0, file: 0)
    /// The resident part of the child's mappings of the store's two files.
    var storeFilesResidentKiB = 0
    var afterFill = Space()
    var beforeTrim = Space()
    var afterTrim = Space()
}

/// The samples of a scaling run and the tables made from them.
struct ScalingResults {
    var sizes: [Int]
    var runs: Int
    var samples: [Int: [ScalingSample]]

    /// The median over the rounds of one figure at `n`.
    func median(_ n: Int, _ figure: (ScalingSample) -> Double) -> Double {
        Statistics.median((samples[n] ?? []).map(figure))
    }

    func markdown(machine: Machine) -> String {
        let sorted = sizes.sorted()
        var out =
            "## MappedKV scaling: N = \(sorted.map { Format.grouped(Double($0)) }.joined(separator: ", ")), medians of \(runs) rounds\n\n"
        out += "Machine: \(machine.summary)\n\n"
        out +=
            "Store of N Int32 keys `int-<i>`. reopen_load: a single-process open and `count`; the close before it wrote "
            + "the index file, so the open maps it and the data file and copies nothing (docs/FORMAT.md 12.5). "
            + "Averaged over 5 reopens. Overwrite: every key set again (i + 1), leaving dead records. "
            + "Full write-back: `trim()` after the overwrite (journal + fdatasync, in-place rewrite + msync).\n\n"
        out +=
            "| N | set (ns/op) | get (ns/op) | overwrite (ns/op) | reopen_load (ms) | reopen_load (ns/key) | full write-back (ms) | write-back (ns/key) |\n"
        out += "|---:|---:|---:|---:|---:|---:|---:|---:|\n"
        for n in sorted {
            let keys = Double(n)
            let load = median(n) { $0.reopenLoadNanoseconds }
            let trim = median(n) { $0.trimNanoseconds }
            out +=
                "| \(Format.grouped(keys)) | \(Format.grouped(median(n) { $0.setNanoseconds })) | "
                + "\(Format.grouped(median(n) { $0.getNanoseconds })) | \(Format.grouped(median(n) { $0.overwriteNanoseconds })) | "
                + "\(Format.fixed(load / 1e6, 2)) | \(Format.grouped(load / keys)) | \(Format.fixed(trim / 1e6, 2)) | \(Format.grouped(trim / keys)) |\n"
        }
        out +=
            "\nSpace: live bytes are the live records (`varint(key length) key varint(value length) value`); "
            + "file/live is the data file's size over them, log/live the used region (live and dead records) over them.\n\n"
        out +=
            "| N | live (MiB) | after N sets: file (MiB) | file/live | log/live | after overwrite: records | file/live | log/live "
            + "| after trim: file (MiB) | file/live | log/live |\n"
        out += "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n"
        for n in sorted {
            out +=
                "| \(Format.grouped(Double(n))) | \(Format.mebibytes(median(n) { Double($0.afterFill.liveBytes) })) | "
                + "\(Format.mebibytes(median(n) { Double($0.afterFill.fileBytes) })) | "
                + "\(Format.fixed(median(n) { $0.afterFill.fileAmplification }, 2)) | \(Format.fixed(median(n) { $0.afterFill.logAmplification }, 2)) | "
                + "\(Format.grouped(median(n) { Double($0.beforeTrim.records) })) | "
                + "\(Format.fixed(median(n) { $0.beforeTrim.fileAmplification }, 2)) | \(Format.fixed(median(n) { $0.beforeTrim.logAmplification }, 2)) | "
                + "\(Format.mebibytes(median(n) { Double($0.afterTrim.fileBytes) })) | "
                + "\(Format.fixed(median(n) { $0.afterTrim.fileAmplification }, 2)) | \(Format.fixed(median(n) { $0.afterTrim.logAmplification }, 2)) |\n"
        }
        out +=
            "\nResident memory of a load, in a child process: VmRSS, RssAnon and RssFile from /proc/self/status "
            + "after the open minus before it (the child first warms up on a tiny store; RssFile also counts code pages "
            + "touched for the first time), and the resident part of the mappings of the store's two files from /proc/self/smaps:\n\n"
        out +=
            "| N | VmRSS delta (MiB) | anonymous (MiB) | file-backed (MiB) | of which the store's files (MiB) | VmRSS bytes/key |\n"
        out += "|---:|---:|---:|---:|---:|---:|\n"
        for n in sorted {
            let total = median(n) { Double($0.residentKiB.total) * 1024 }
            out +=
                "| \(Format.grouped(Double(n))) | \(Format.mebibytes(total)) | "
                + "\(Format.mebibytes(median(n) { Double($0.residentKiB.anonymous) * 1024 })) | "
                + "\(Format.mebibytes(median(n) { Double($0.residentKiB.file) * 1024 })) | "
                + "\(Format.mebibytes(median(n) { Double($0.storeFilesResidentKiB) * 1024 })) | \(Format.grouped(total / Double(n))) |\n"
        }
        return out
    }
}
