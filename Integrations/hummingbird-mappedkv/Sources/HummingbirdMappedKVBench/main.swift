// The persist driver's read cost against its floor, timed in one run: a `get` through
// MappedKVPersistDriver, a `DiskCache` get of the same JSON bytes, and the `JSONDecoder` decode of
// the same value, which any Codable driver pays. Run in release, pinned to one core:
//
//   taskset -c 0 swift run -c release HummingbirdMappedKVBench [--n 200000] [--rounds 7]
//
// Invariant: every timed loop reads the value it is meant to (checked before timing) and feeds its
// result to a sink, so the optimizer cannot drop the work; the figures are ns per operation,
// min and median over the rounds.

import Foundation
import HummingbirdMappedKV
import MappedKVCache

/// A value of the size and shape of a web session.
struct Session: Codable, Sendable, Equatable {
    var userID: UUID
    var name: String
    var roles: [String]
    var createdAt: Double
    var visits: Int
}

/// The command line: `--n` operations per round, `--rounds` rounds.
struct BenchOptions {
    var operations = 200_000
    var rounds = 7

    init(arguments: [String]) {
        var iterator = arguments.makeIterator()
        while let option = iterator.next() {
            let value = iterator.next().flatMap { Int($0) }
            switch (option, value) {
            case ("--n", let n?) where n > 0: operations = n
            case ("--rounds", let r?) where r > 0: rounds = r
            default:
                FileHandle.standardError.write(Data("usage: HummingbirdMappedKVBench [--n N] [--rounds R]\n".utf8))
                exit(2)
            }
        }
    }
}

/// Something a timed loop's results flow into, so that no loop is optimized away.
struct Sink {
    var total = 0
    mutating func take(_ value: Int) { total &+= value }
}

/// Nanoseconds per operation of `operations` runs of `body`.
func nanoseconds(per operations: Int, _ body: () async throws -> Int) async rethrows -> (Double, Int) {
    let clock = ContinuousClock()
    var sink = Sink()
    let start = clock.now
    for _ in 0..<operations { sink.take(try await body()) }
    let elapsed = start.duration(to: clock.now)
    let (seconds, attoseconds) = elapsed.components
    let total = Double(seconds) * 1e9 + Double(attoseconds) / 1e9
    return (total / Double(operations), sink.total)
}

/// Min and median of `values`.
func summary(_ values: [Double]) -> (min: Double, median: Double) {
    let sorted = values.sorted()
    return (sorted.first ?? .nan, sorted.isEmpty ? .nan : sorted[sorted.count / 2])
}

func runBench() async throws {
    let options = BenchOptions(arguments: Array(CommandLine.arguments.dropFirst()))
    let root = FileManager.default.temporaryDirectory.appendingPathComponent("hb-mappedkv-bench-\(UUID().uuidString)")
    defer { try? FileManager.default.removeItem(at: root) }

    let session = Session(
        userID: UUID(), name: "Ada Lovelace", roles: ["reader", "editor", "admin"],
        createdAt: 1_795_000_000.25, visits: 42)
    let json = try JSONEncoder().encode(session)
    let jsonBytes = [UInt8](json)

    let driver = try MappedKVPersistDriver(directory: root.appendingPathComponent("persist").path)
    try await driver.set(key: "session", value: session, expires: .seconds(3600))
    let disk = try DiskCache(directory: root.appendingPathComponent("disk").path)
    try disk.set(jsonBytes, forKey: "session", timeToLive: .seconds(3600))
    let decoder = JSONDecoder()

    // Every path reads the value before it is timed.
    guard try await driver.get(key: "session", as: Session.self) == session,
        try disk.value(forKey: "session") == jsonBytes,
        try decoder.decode(Session.self, from: json) == session
    else {
        FileHandle.standardError.write(Data("a path does not read the stored value\n".utf8))
        exit(1)
    }

    var driverTimes: [Double] = []
    var diskTimes: [Double] = []
    var decodeTimes: [Double] = []
    var diskThenDecodeTimes: [Double] = []
    var checksum = 0
    for _ in 0..<options.rounds {
        let (driverTime, a) = try await nanoseconds(per: options.operations) {
            try await driver.get(key: "session", as: Session.self)?.visits ?? 0
        }
        let (diskTime, b) = try await nanoseconds(per: options.operations) {
            try disk.value(forKey: "session")?.count ?? 0
        }
        let (decodeTime, c) = try await nanoseconds(per: options.operations) {
            try decoder.decode(Session.self, from: json).visits
        }
        let (bothTime, d) = try await nanoseconds(per: options.operations) {
            guard let bytes = try disk.value(forKey: "session") else { return 0 }
            return try decoder.decode(Session.self, from: Data(bytes)).visits
        }
        driverTimes.append(driverTime)
        diskTimes.append(diskTime)
        decodeTimes.append(decodeTime)
        diskThenDecodeTimes.append(bothTime)
        checksum &+= a &+ b &+ c &+ d
    }

    let driverSummary = summary(driverTimes)
    let diskSummary = summary(diskTimes)
    let decodeSummary = summary(decodeTimes)
    let bothSummary = summary(diskThenDecodeTimes)
    // The ratio of each round's own figures, so rounds disturbed by other load compare like with like.
    let ratios = summary(zip(driverTimes, zip(diskTimes, decodeTimes)).map { $0 / ($1.0 + $1.1) })
    func row(_ name: String, _ figures: (min: Double, median: Double)) -> String {
        name.padding(toLength: 44, withPad: " ", startingAt: 0)
            + String(format: "%9.0f %9.0f", figures.min, figures.median)
    }
    print("value: \(json.count) bytes of JSON; \(options.operations) operations x \(options.rounds) rounds")
    print("ns/op".padding(toLength: 44, withPad: " ", startingAt: 0) + "      min    median")
    print(row("persist get (MappedKVPersistDriver)", driverSummary))
    print(row("DiskCache get of the same bytes", diskSummary))
    print(row("JSONDecoder decode of the same value", decodeSummary))
    print(row("DiskCache get, then decode (one loop)", bothSummary))
    print(
        String(
            format: "ratio persist get / (DiskCache get + decode): min %.2fx median %.2fx (target <= 1.2x)",
            ratios.min, ratios.median))
    print("(checksum \(checksum))")
}

try await runBench()
