import ArgumentParser
import Foundation
import MappedKV

/// `mappedkv tidy-load`: the other process of `mappedkv bench --tidy` (hidden; started by it).
/// Gets random keys of a shared store and sets keys of its own (so that the tidy's expired keys
/// stay as they were) for a while, and writes how long each took.
struct TidyLoadCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "tidy-load", abstract: "The load process of 'bench --tidy' (started by it).", shouldDisplay: false)

    @Option(name: .long, help: "The store's directory.") var root: String
    @Option(name: .long, help: "The store's ID.") var id: String
    @Option(name: .long, help: "The store's keys are k0 ..< k<keys>.") var keys: Int
    @Option(name: .long, help: "How long to run, in milliseconds.") var milliseconds: Int
    @Option(name: .long, help: "Where to write the timings.") var out: String

    func run() throws {
        let store = try reportingErrors {
            try MappedKV(
                id: id, directory: root, configuration: Configuration(isMultiProcess: true, keyExpiry: .zero))
        }
        defer { store.close() }
        var random = SystemRandomNumberGenerator()
        var timings: [TidyTiming] = []
        timings.reserveCapacity(1 << 20)
        FileHandle.standardOutput.write(Data("ready\n".utf8))
        let end = DispatchTime.now().uptimeNanoseconds + UInt64(milliseconds) * 1_000_000
        var isSet = false
        while true {
            let key =
                isSet
                ? "load\(Int.random(in: 0..<10_000, using: &random))" : "k\(Int.random(in: 0..<keys, using: &random))"
            let start = DispatchTime.now().uptimeNanoseconds
            guard start < end else { break }
            if isSet {
                try reportingErrors { try store.set(Int64(start & 0xFFFF), forKey: key) }
            } else {
                _ = try reportingErrors { try store.value(forKey: key, as: Int64.self) }
            }
            timings.append(
                TidyTiming(start: start, nanoseconds: DispatchTime.now().uptimeNanoseconds - start, isSet: isSet))
            isSet.toggle()
        }
        try TidyTiming.write(timings, to: out)
    }
}

/// One operation of the load process: when it began (monotonic nanoseconds, comparable between
/// processes), how long it took, and whether it was a set.
struct TidyTiming {
    var start: UInt64
    var nanoseconds: UInt64
    var isSet: Bool

    /// Writes `timings` as lines of three numbers.
    static func write(_ timings: [TidyTiming], to path: String) throws {
        let text = timings.map { "\($0.start) \($0.nanoseconds) \($0.isSet ? 1 : 0)" }.joined(separator: "\n")
        try text.write(toFile: path, atomically: true, encoding: .utf8)
    }

    /// The timings `write` wrote to `path`.
    static func read(from path: String) throws -> [TidyTiming] {
        try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n").compactMap { line in
            let fields = line.split(separator: " ").compactMap { UInt64($0) }
            guard fields.count == 3 else { return nil }
            return TidyTiming(start: fields[0], nanoseconds: fields[1], isSet: fields[2] == 1)
        }
    }
}
