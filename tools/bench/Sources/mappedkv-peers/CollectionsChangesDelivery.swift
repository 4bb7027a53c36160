import Dispatch
import Foundation
import Glibc
import MappedKV
import MappedKVCollections
import Synchronization

/// How soon `Bucket.changes()` delivers another process's put: this process watches a bucket of
/// a multi-process collection store while a child (this executable again, `--changes-writer`)
/// puts `puts` keys, one at a time, a random 0-20 ms apart (so that the puts fall at every phase
/// of the store's 10 ms change watcher). Both read CLOCK_MONOTONIC, which every process on Linux
/// shares: the child notes when each put returned and prints the times when it is done; this
/// process notes when each key came out of the stream in the reading task. The delivery time of a
/// put is the difference.
struct CollectionsChangesDelivery {
    var puts: Int
    var root: String

    static let bucket = "posts"
    static let storeID = "changes"

    struct Result {
        /// Milliseconds from each put returning to its change arriving, sorted.
        var delays: [Double]
        /// Puts whose change did not arrive as a put of their key (a resync stood for them).
        var unnamed: Int
        var resyncs: Int
    }

    static func monotonicNanoseconds() -> UInt64 {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec)
    }

    /// The arrival times the reading task noted.
    final class Arrivals: Sendable {
        private let state = Mutex<(times: [String: UInt64], resyncs: Int)>(([:], 0))
        func note(_ change: BucketChange, at time: UInt64) {
            state.withLock { state in
                switch change {
                case .put(let key): if state.times[key] == nil { state.times[key] = time }
                case .remove: break
                case .resync: state.resyncs += 1
                }
            }
        }
        var snapshot: (times: [String: UInt64], resyncs: Int) { state.withLock { $0 } }
    }

    func run(progress: (String) -> Void) throws -> Result {
        let directory = try Scratch.directory("\(root)/collections-changes")
        defer { try? Scratch.remove(directory) }
        let collections = try CollectionStore(
            id: Self.storeID, directory: directory, configuration: Configuration(isMultiProcess: true))
        defer { collections.close() }
        let changes = collections.bucket(Self.bucket, serializer: RawEntrySerializer()).changes()
        let arrivals = Arrivals()
        let done = DispatchSemaphore(value: 0)
        Task.detached {
            for await change in changes { arrivals.note(change, at: Self.monotonicNanoseconds()) }
            done.signal()
        }
        progress("changes delivery: \(puts) puts by another process")
        let executable = try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")
        let child = Process()
        child.executableURL = URL(fileURLWithPath: executable)
        child.arguments = ["--changes-writer", directory, "--changes-puts", "\(puts)"]
        let output = Pipe()
        child.standardOutput = output
        try child.run()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        child.waitUntilExit()
        guard child.terminationStatus == 0 else {
            throw BenchError("the changes writer exited \(child.terminationStatus)")
        }
        var returned: [String: UInt64] = [:]
        for line in text.split(separator: "\n") {
            let parts = line.split(separator: " ")
            guard parts.count == 2, let time = UInt64(parts[1]) else { continue }
            returned[String(parts[0])] = time
        }
        // Waits (a deadline, not a synchronisation) for the last changes, then ends the stream.
        let deadline = Self.monotonicNanoseconds() + 5_000_000_000
        while arrivals.snapshot.times.count < returned.count, Self.monotonicNanoseconds() < deadline {
            usleep(1_000)
        }
        changes.finish()
        done.wait()
        let (times, resyncs) = arrivals.snapshot
        var delays: [Double] = []
        for (key, returnedAt) in returned {
            guard let arrived = times[key] else { continue }
            delays.append((Double(arrived) - Double(returnedAt)) / 1_000_000)
        }
        return Result(delays: delays.sorted(), unnamed: returned.count - delays.count, resyncs: resyncs)
    }

    /// The child: puts `puts` keys into the bucket a random 0-20 ms apart, then prints
    /// `key nanoseconds` for each, the CLOCK_MONOTONIC time its put returned.
    static func runWriter(directory: String, puts: Int) throws {
        let collections = try CollectionStore(
            id: storeID, directory: directory, configuration: Configuration(isMultiProcess: true))
        defer { collections.close() }
        let bucket = collections.bucket(bucket, serializer: RawEntrySerializer())
        var generator = SeededGenerator(seed: 32)
        var returned: [(String, UInt64)] = []
        for number in 0..<puts {
            usleep(UInt32(generator.next() % 20_000))
            let key = "p\(number)"
            try bucket.put(Array("{\"n\":\(number)}".utf8), forKey: key)
            returned.append((key, monotonicNanoseconds()))
        }
        print(returned.map { "\($0.0) \($0.1)" }.joined(separator: "\n"))
    }

    static func markdown(_ result: Result, puts: Int) -> String {
        func percentile(_ p: Double) -> Double {
            guard !result.delays.isEmpty else { return .nan }
            let index = min(result.delays.count - 1, Int((Double(result.delays.count) * p).rounded(.up)) - 1)
            return result.delays[max(0, index)]
        }
        var text = "\n## Collections: changes delivery, \(puts) puts by another process\n\n"
        text += "| workload | median | p99 | max | target |\n|---|---|---|---|---|\n"
        text += "| changes delivery: another process's put returned -> `changes()` yields it | "
        text += String(
            format: "%.2f ms | %.2f ms | %.2f ms | <= 50 ms |\n", percentile(0.5), percentile(0.99),
            result.delays.last ?? .nan)
        text += "\n\(result.delays.count) of \(puts) puts arrived named; \(result.unnamed) only through "
        text += "\(result.resyncs) resync(s) (another process rewrote the store as a whole). Times are "
        text += "CLOCK_MONOTONIC, shared by the processes; the puts are a random 0-20 ms apart.\n"
        return text
    }
}
