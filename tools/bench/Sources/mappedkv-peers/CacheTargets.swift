// The targets of the cache comparison, each a ratio of two figures timed in the same run (median
// over median), so that a slow stretch of the machine moves both sides: a MappedKVCache figure
// against a floor it is built on (a dictionary behind a mutex, a multi-process MappedKV store, the
// CRC-32 alone) or against a peer design.

/// One figure of a target: a median, or the difference of two (for the 1 MiB checked get, what
/// a get adds to a plain read).
enum TargetFigure {
    case median(CacheDesign, CacheWorkload)
    case difference(CacheDesign, CacheWorkload, minus: CacheDesign, CacheWorkload)

    func value(_ results: CacheResults) -> Double {
        switch self {
        case .median(let design, let workload):
            results.median(design, workload)
        case .difference(let design, let workload, let other, let otherWorkload):
            results.median(design, workload) - results.median(other, otherWorkload)
        }
    }

    /// The workload whose unit the figure is quoted in.
    var workload: CacheWorkload {
        switch self {
        case .median(_, let workload), .difference(_, let workload, _, _): workload
        }
    }
}

/// A target: `numerator / denominator` at most (or at least) `limit`; without a limit, a ratio
/// printed for information.
struct RatioTarget {
    var name: String
    var numerator: TargetFigure
    var denominator: TargetFigure
    var limit: Double?
    var atMost = true

    func ratio(_ results: CacheResults) -> Double { numerator.value(results) / denominator.value(results) }

    /// Whether the target is met; nil when a figure is missing or the row is for information.
    func met(_ results: CacheResults) -> Bool? {
        let ratio = ratio(results)
        guard let limit, ratio.isFinite else { return nil }
        return atMost ? ratio <= limit : ratio >= limit
    }

    var limitText: String {
        guard let limit else { return "(information)" }
        return (atMost ? "≤ " : "≥ ") + Format.oneDecimal(limit) + "x"
    }

    /// The targets, in report order: each get and set row and its random-order variant.
    static var all: [RatioTarget] {
        let lock = DiskCacheDefaultLock.processLock.name
        var targets: [RatioTarget] = []
        for (workload, limit) in [
            (CacheWorkload.memoryGet, 1.2), (.memoryGetRandom, 1.2), (.memorySet, 1.3), (.memorySetRandom, 1.3),
        ] {
            targets.append(
                RatioTarget(
                    name: "\(workload.rawValue): MemoryCache / Mutex<[String: [UInt8]]> + FIFO",
                    numerator: .median(.mappedkv, workload), denominator: .median(.baseline, workload), limit: limit))
        }
        // The cost of coherence: a `Cache` memory hit against a hit of the same cache's memory tier
        // read directly (same entries, layout and keys, same rounds), and, for information, against
        // the separate `MemoryCache` of the memory rows.
        for (workload, tier, memory) in [
            (CacheWorkload.cacheMemoryGet, CacheWorkload.cacheTierGet, CacheWorkload.memoryGet),
            (.cacheMemoryGetRandom, .cacheTierGetRandom, .memoryGetRandom),
        ] {
            targets.append(
                RatioTarget(
                    name: "\(workload.rawValue): Cache memory hit / its memory tier's hit (\(tier.rawValue))",
                    numerator: .median(.mappedkv, workload), denominator: .median(.mappedkv, tier), limit: 1.3))
            targets.append(
                RatioTarget(
                    name: "\(workload.rawValue): Cache memory hit / MemoryCache hit (\(memory.rawValue))",
                    numerator: .median(.mappedkv, workload), denominator: .median(.mappedkv, memory), limit: nil))
        }
        for (workload, limit) in [
            (CacheWorkload.diskGet, 1.5), (.diskGetRandom, 1.5), (.diskSet, 1.3), (.diskSetRandom, 1.3),
        ] {
            targets.append(
                RatioTarget(
                    name: "\(workload.rawValue): DiskCache / MappedKV multi-process, \(lock) (DiskCache's lock)",
                    numerator: .median(.mappedkv, workload), denominator: .median(.baseline, workload), limit: limit))
            targets.append(
                RatioTarget(
                    name: "\(workload.rawValue): DiskCache / MappedKV multi-process, .flock",
                    numerator: .median(.mappedkv, workload), denominator: .median(.mappedkvFlock, workload),
                    limit: nil))
        }
        targets.append(
            RatioTarget(
                name: "disk_get_floor: (store get + CRC-32 + access note) / store get, \(lock)",
                numerator: .median(.baseline, .diskGetFloor), denominator: .median(.baseline, .diskGet),
                limit: nil))
        targets.append(
            RatioTarget(
                name: "disk_get: DiskCache / disk_get_floor",
                numerator: .median(.mappedkv, .diskGet), denominator: .median(.baseline, .diskGetFloor),
                limit: nil))
        targets.append(
            RatioTarget(
                name: "disk_set_floor: (CRC-32 + clock + store set of the record + totals) / store set, \(lock)",
                numerator: .median(.baseline, .diskSetFloor), denominator: .median(.baseline, .diskSet),
                limit: nil))
        targets.append(
            RatioTarget(
                name: "disk_set: DiskCache / disk_set_floor",
                numerator: .median(.mappedkv, .diskSet), denominator: .median(.baseline, .diskSetFloor),
                limit: nil))
        targets.append(
            RatioTarget(
                name: "1 MiB checked get: (large_get − plain file's large_get) / crc32_1mib",
                numerator: .difference(.mappedkv, .largeGet, minus: .plainFile, .largeGet),
                denominator: .median(.baseline, .crc32), limit: 1.1))
        targets.append(
            RatioTarget(
                name: "large_get_floor: (read + CRC-32 − plain file's large_get) / crc32_1mib",
                numerator: .difference(.plainFile, .largeGetFloor, minus: .plainFile, .largeGet),
                denominator: .median(.baseline, .crc32), limit: nil))
        targets.append(
            RatioTarget(
                name: "large_get: DiskCache / large_get_floor",
                numerator: .median(.mappedkv, .largeGet), denominator: .median(.plainFile, .largeGetFloor), limit: nil))
        for workload in [CacheWorkload.diskGet, .diskGetRandom] {
            targets.append(
                RatioTarget(
                    name: "\(workload.rawValue): SQLite + files / DiskCache",
                    numerator: .median(.sqliteFiles, workload), denominator: .median(.mappedkv, workload), limit: 10,
                    atMost: false))
            targets.append(
                RatioTarget(
                    name: "\(workload.rawValue): file per entry / DiskCache",
                    numerator: .median(.filePerEntry, workload), denominator: .median(.mappedkv, workload), limit: 15,
                    atMost: false))
        }
        return targets
    }

    /// The targets table: each target, its two figures, the ratio, the limit and whether it is met.
    static func markdown(_ results: CacheResults) -> String {
        var out = "| target | numerator | denominator | ratio | limit | met |\n|---|---:|---:|---:|---|---|\n"
        for target in all {
            let numerator = target.numerator.value(results)
            let denominator = target.denominator.value(results)
            let verdict = target.met(results).map { $0 ? "yes" : "NO" } ?? "-"
            out +=
                "| \(target.name) | \(figure(numerator, target.numerator.workload)) | "
                + "\(figure(denominator, target.denominator.workload)) | \(ratio(target.ratio(results))) | "
                + "\(target.limitText) | \(verdict) |\n"
        }
        return out
    }

    /// A figure with its unit: "217 ns", "82.4 µs".
    private static func figure(_ nanoseconds: Double, _ workload: CacheWorkload) -> String {
        guard nanoseconds.isFinite else { return "-" }
        switch workload.unit {
        case .nanoseconds: return Format.grouped(nanoseconds) + " ns"
        case .microseconds: return Format.fixed(nanoseconds / 1e3, 1) + " µs"
        case .milliseconds: return Format.fixed(nanoseconds / 1e6, 2) + " ms"
        }
    }

    /// Two decimals below 10x, where the limits lie; fewer above.
    private static func ratio(_ value: Double) -> String {
        guard value.isFinite else { return "-" }
        return value < 10 ? Format.fixed(value, 2) + "x" : Format.ratio(value)
    }
}
