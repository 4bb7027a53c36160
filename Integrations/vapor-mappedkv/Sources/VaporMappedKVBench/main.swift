// The adapter's cost, in one release run: a Vapor cache get through MappedKVVaporCache against the
// floor any Codable driver over the same directory pays, a DiskCache get of the same bytes plus the
// JSONDecoder decode of the same value. The floor is timed as one loop doing both, so its get runs
// with the processor's caches in the state the decode leaves them, as the driver's does; the two
// parts are also timed alone, for reference. Rounds alternate the measurements, so load from other
// work on the machine falls on all of them; each figure is the minimum and median ns per operation,
// and the target's ratio is the median of the rounds' ratios (each round's driver against the same
// round's floor), which a slow stretch of the machine shifts less than a ratio of medians.
//
//     swift run -c release VaporMappedKVBench [rounds] [iterations per round]

import Foundation
import MappedKVCache
import NIOCore
import NIOPosix
import Vapor
import VaporMappedKV

/// A small cached response: the kind of value an app keeps in its cache.
struct Profile: Codable, Equatable, Sendable {
    var id: Int
    var name: String
    var email: String
    var roles: [String]
    var score: Double
    var active: Bool
}

/// Times `iterations` calls of `body` and returns the nanoseconds per call.
@inline(never)
func nanosecondsPerCall(_ iterations: Int, _ body: () throws -> Void) rethrows -> Double {
    let start = ContinuousClock.now
    for _ in 0..<iterations { try body() }
    let elapsed = ContinuousClock.now - start
    let (seconds, attoseconds) = elapsed.components
    return (Double(seconds) * 1e9 + Double(attoseconds) / 1e9) / Double(iterations)
}

/// The minimum and the median of `samples`.
func minimumAndMedian(_ samples: [Double]) -> (Double, Double) {
    let sorted = samples.sorted()
    return (sorted.first ?? 0, sorted.isEmpty ? 0 : sorted[sorted.count / 2])
}

let arguments = CommandLine.arguments.dropFirst().compactMap { Int($0) }
let rounds = arguments.first ?? 15
let iterations = arguments.dropFirst().first ?? 20_000

let directory = FileManager.default.temporaryDirectory.appendingPathComponent("vapor-mappedkv-bench-\(getpid())").path
let disk = try DiskCache(directory: directory)
defer {
    disk.close()
    try? FileManager.default.removeItem(atPath: directory)
}
let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
let loop = group.next()
let cache = MappedKVVaporCache(disk: disk, eventLoop: loop)

let profile = Profile(
    id: 4_711, name: "Ada Lovelace", email: "ada@example.com", roles: ["admin", "editor", "reader"],
    score: 97.5, active: true)
try await cache.set("profile", to: profile).get()
// The same entry read straight from the directory: the driver keeps its keys under this prefix.
let storedKey = "vapor.cache/profile"
guard let storedBytes = try disk.value(forKey: storedKey) else {
    throw Abort(.internalServerError, reason: "the bench entry was not stored")
}
let storedData = Data(storedBytes)
print("value: \(storedBytes.count) bytes of JSON; \(rounds) rounds of \(iterations) calls each")

/// One round of each measurement, on the event loop, as a request handler's call would run.
struct Round: Sendable {
    var driver: Double
    var floor: Double
    var disk: Double
    var decode: Double
}

var samples: [Round] = []
for _ in 0..<rounds {
    let round = try await loop.submit { () throws -> Round in
        var driverFound = 0
        let driver = nanosecondsPerCall(iterations) {
            cache.get("profile", as: Profile.self).assumeIsolated().whenSuccess { value in
                if value != nil { driverFound += 1 }
            }
        }
        var floorFound = 0
        let floor = try nanosecondsPerCall(iterations) {
            if try disk.value(forKey: storedKey) != nil {
                floorFound += try JSONDecoder().decode(Profile.self, from: storedData).id
            }
        }
        var diskFound = 0
        let diskGet = try nanosecondsPerCall(iterations) {
            if let bytes = try disk.value(forKey: storedKey) { diskFound += bytes.count }
        }
        var decoded = 0
        let decode = try nanosecondsPerCall(iterations) {
            decoded += try JSONDecoder().decode(Profile.self, from: storedData).id
        }
        guard driverFound == iterations, floorFound == iterations * profile.id,
            diskFound == iterations * storedBytes.count,
            decoded == iterations * profile.id
        else { throw Abort(.internalServerError, reason: "a bench read missed") }
        return Round(driver: driver, floor: floor, disk: diskGet, decode: decode)
    }.get()
    samples.append(round)
}

// The async form, as a route handler calls it: includes the hop to the future's event loop that
// awaiting any Vapor `Cache` future pays off the loop (for reference; not part of the ratio).
var asyncSamples: [Double] = []
for _ in 0..<rounds {
    let start = ContinuousClock.now
    for _ in 0..<(iterations / 10) {
        guard try await cache.get("profile", as: Profile.self).get() != nil else {
            throw Abort(.internalServerError, reason: "an async bench read missed")
        }
    }
    let (seconds, attoseconds) = (ContinuousClock.now - start).components
    asyncSamples.append((Double(seconds) * 1e9 + Double(attoseconds) / 1e9) / Double(iterations / 10))
}

let (driverMin, driverMedian) = minimumAndMedian(samples.map(\.driver))
let (floorMin, floorMedian) = minimumAndMedian(samples.map(\.floor))
let (diskMin, diskMedian) = minimumAndMedian(samples.map(\.disk))
let (decodeMin, decodeMedian) = minimumAndMedian(samples.map(\.decode))
let (asyncMin, asyncMedian) = minimumAndMedian(asyncSamples)
let (ratioMin, ratioMedian) = minimumAndMedian(samples.map { $0.driver / $0.floor })
func row(_ name: String, _ minimum: Double, _ median: Double) -> String {
    name.padding(toLength: 46, withPad: " ", startingAt: 0) + String(format: "%9.0f %9.0f", minimum, median)
}
print("ns per op".padding(toLength: 46, withPad: " ", startingAt: 0) + "      min    median")
print(row("Vapor cache get (MappedKVVaporCache)", driverMin, driverMedian))
print(row("floor: DiskCache get + decode, one loop", floorMin, floorMedian))
print(row("  DiskCache get of the same bytes, alone", diskMin, diskMedian))
print(row("  JSONDecoder decode of the same value, alone", decodeMin, decodeMedian))
print(row("async get from a task (hops to the loop)", asyncMin, asyncMedian))
print(
    String(
        format: "ratio driver / floor, per round: %.3f (median), %.3f (min); ratio of medians %.3f; target <= 1.2",
        ratioMedian, ratioMin, driverMedian / floorMedian))
try await group.shutdownGracefully()
