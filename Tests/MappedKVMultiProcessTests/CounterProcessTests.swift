import Foundation
import MappedKVProcessTestSupport
import Testing

/// Counters across real processes: P `mappedkv increment` processes add M each to one counter
/// while other processes incrementing another key are killed with SIGKILL at spread-out moments
/// (some of them while they hold the store's lock); the counter ends at exactly P × M.
@Suite("Counters across processes", .serialized)
struct CounterProcessTests {
    func start(_ arguments: [String]) throws -> Process {
        let process = Process()
        process.executableURL = try CLI.binary.get()
        process.arguments = arguments
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        return process
    }

    @Test("P processes × M increments end at P × M, with kills of other processes in between")
    func noCountIsLost() throws {
        try TemporaryDirectory.with { tmp in
            let root = tmp.path("root")
            let store = CLI.store(root, "counters") + ["--multi-process"]
            try CLI.succeed(["increment"] + store + ["victims", "--by", "0"])
            let processes = 4
            let increments = 1_000
            let counters = try (0..<processes).map { _ in
                try start(["increment"] + store + ["hits", "--times", "\(increments)"])
            }
            var kills = 0
            var delay = 1
            // Victims loop on their own key until killed, at moments spread out by the delay
            // (fault injection, not synchronisation).
            while counters.contains(where: \.isRunning) && kills < 12 {
                let victim = try start(["increment"] + store + ["victims", "--times", "1000000"])
                usleep(UInt32(delay * 1_000))
                kill(victim.processIdentifier, SIGKILL)
                victim.waitUntilExit()
                if victim.terminationReason == .uncaughtSignal { kills += 1 }
                delay = delay % 40 + 7
            }
            for counter in counters {
                counter.waitUntilExit()
                #expect(counter.terminationStatus == 0)
            }
            #expect(kills > 0, "no victim was killed while the counters ran")
            let total = try CLI.succeed(["increment"] + store + ["hits", "--by", "0"])
            #expect(total.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "\(processes * increments)")
            try CLI.succeed(["verify"] + CLI.store(root, "counters"))
            print(
                "counters across processes: \(processes) × \(increments) = \(total.stdout.trimmingCharacters(in: .whitespacesAndNewlines)), \(kills) kills"
            )
        }
    }
}
