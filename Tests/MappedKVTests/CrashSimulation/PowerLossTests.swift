import Foundation
import Testing

@testable import MappedKV

/// Simulated power loss: crash states of every workload, each held to the durability contract
/// (``CrashStateExplorer``).
///
/// `swift test` checks a seeded sample. A long run takes more states and seeds from the
/// environment: `MAPPEDKV_EXPLORER_STATES` (per workload and seed) and `MAPPEDKV_EXPLORER_SEEDS`
/// (a comma-separated list); `MAPPEDKV_EXPLORER_REPLAY=workload:seed:state` checks one state.
@Suite("Power loss")
struct PowerLossTests {
    static let environment = ProcessInfo.processInfo.environment
    static let statesPerWorkload = environment["MAPPEDKV_EXPLORER_STATES"].flatMap(Int.init) ?? 120
    static let seeds: [UInt64] =
        environment["MAPPEDKV_EXPLORER_SEEDS"].map { $0.split(separator: ",").compactMap { UInt64($0) } } ?? [1]

    @Test("crash states of every workload keep the durability contract", arguments: ExplorerWorkload.allCases)
    func explore(_ workload: ExplorerWorkload) throws {
        if let replay = Self.environment["MAPPEDKV_EXPLORER_REPLAY"] {
            let parts = replay.split(separator: ":")
            guard parts.count == 3, parts[0] == workload.rawValue, let seed = UInt64(parts[1]),
                let number = Int(parts[2])
            else { return }
            try check(workload, seed: seed, states: number..<(number + 1))
            return
        }
        for seed in Self.seeds { try check(workload, seed: seed, states: 0..<Self.statesPerWorkload) }
    }

    func check(_ workload: ExplorerWorkload, seed: UInt64, states: Range<Int>) throws {
        let recording = CrashStateExplorer.scratchDirectory("explorer-rec")
        let replay = CrashStateExplorer.scratchDirectory("explorer-replay")
        let explorer = try CrashStateExplorer(workload: workload, seed: seed, scratch: recording.path)
        let tally = try explorer.explore(states: states, in: replay.path)
        print(
            "explorer: \(workload) seed \(seed): \(tally.states) states, \(tally.crashLosses) with writes lost, "
                + "\(tally.indexFiles) with an index file, "
                + "\(tally.failures.count) violations (\(explorer.recording.writes.count) writes, "
                + "\(explorer.recording.acknowledgedAt.count) operations)")
        #expect(tally.failures.isEmpty, "\(tally.failures.count) violations: \(tally.failures)")
        CrashSimulationTally.shared.add("power-loss states", tally.states)
        CrashSimulationTally.shared.add("power-loss states with writes lost", tally.crashLosses)
        CrashSimulationTally.shared.add("power-loss states with an index file", tally.indexFiles)
    }

    @Test("the sample reaches states that lose writes: the model bites")
    func theModelBites() throws {
        let recording = CrashStateExplorer.scratchDirectory("explorer-rec")
        let replay = CrashStateExplorer.scratchDirectory("explorer-replay")
        let explorer = try CrashStateExplorer(workload: .appends, seed: 1, scratch: recording.path)
        let tally = try explorer.explore(states: 0..<200, in: replay.path)
        #expect(tally.failures.isEmpty)
        #expect(tally.crashLosses > 0, "no state lost a write: the crash states are too kind")
    }
}
