import Foundation

/// MMKV's column of the open-scaling bench, through an external driver program (`--mmkv-driver`):
/// MMKV is C++ and is never built or fetched by this repository. The driver's subcommands:
///
/// - `fill <dir> <id> <N>`: a store of N Int32 keys `int-<i>` holding i;
/// - `open-get <dir> <id> <key>`: opens the store, gets one key and prints
///   `{"open_ms","get_us","value","count","rss_anon_kb","rss_kb"}`;
/// - `get-bench <dir> <id> <N> <seq|random>`: prints `{"ns_per_get"}`;
/// - `set-bench <dir> <id> <N>`: N sets on a fresh store, prints `{"ns_per_set"}`.
///
/// Each call is a process of its own, so MMKV's open is always a process's first: the driver
/// times it inside, and the bench times the whole process from outside.
struct MMKVDriver {
    static let storeID = "bench"
    var path: String

    /// Fails unless `path` is an executable file.
    func validate() throws {
        guard FileManager.default.isExecutableFile(atPath: path) else {
            throw BenchError("--mmkv-driver \(path) is not an executable file")
        }
    }

    func fill(directory: String, n: Int) throws {
        _ = try ChildRun.run(path, ["fill", directory, Self.storeID, "\(n)"])
    }

    /// Nanoseconds per set of N sets on a fresh store in `directory`.
    func setNanoseconds(directory: String, n: Int) throws -> Double {
        try number("ns_per_set", of: ChildRun.run(path, ["set-bench", directory, Self.storeID, "\(n)"]))
    }

    /// Nanoseconds per get of N gets in key order (`seq`) or in a random order (`random`).
    func getNanoseconds(directory: String, n: Int, order: String) throws -> Double {
        try number("ns_per_get", of: ChildRun.run(path, ["get-bench", directory, Self.storeID, "\(n)", order]))
    }

    /// One `open-get` process: the open and the get as the driver timed them, its memory, and the
    /// whole process's wall time.
    func openGet(directory: String, key: String, expected: Int32, keys: Int) throws -> MMKVOpenGet {
        let outcome = try ChildRun.run(path, ["open-get", directory, Self.storeID, key])
        let object = try Self.object(outcome)
        let value = try Self.number("value", in: object, outcome)
        let count = try Self.number("count", in: object, outcome)
        guard value == Double(expected) else {
            throw BenchError("MMKV: \(key) read \(value), expected \(expected)")
        }
        guard count == Double(keys) else { throw BenchError("MMKV: the store holds \(count) keys, expected \(keys)") }
        return MMKVOpenGet(
            openGetNanoseconds: try Self.number("open_ms", in: object, outcome) * 1e6
                + Self.number("get_us", in: object, outcome) * 1e3,
            processNanoseconds: outcome.nanoseconds,
            anonymousKiB: try Self.number("rss_anon_kb", in: object, outcome),
            totalKiB: try Self.number("rss_kb", in: object, outcome))
    }

    private func number(_ name: String, of outcome: ChildRun.Outcome) throws -> Double {
        try Self.number(name, in: Self.object(outcome), outcome)
    }

    private static func object(_ outcome: ChildRun.Outcome) throws -> [String: Any] {
        let line = outcome.output.split(separator: "\n").last.map(String.init) ?? ""
        guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] else {
            throw BenchError("the MMKV driver printed \(outcome.output.debugDescription), not a JSON object")
        }
        return object
    }

    private static func number(_ name: String, in object: [String: Any], _ outcome: ChildRun.Outcome) throws -> Double {
        guard let value = object[name] as? NSNumber else {
            throw BenchError("the MMKV driver's output has no number \(name): \(outcome.output.debugDescription)")
        }
        return value.doubleValue
    }
}

/// One `open-get` run of the MMKV driver.
struct MMKVOpenGet {
    /// The driver's own timing of its open and its get.
    var openGetNanoseconds: Double
    /// The wall time of the driver's process, start to exit.
    var processNanoseconds: Double
    var anonymousKiB: Double
    var totalKiB: Double
}
