import ArgumentParser
import Foundation
import MappedKV

/// `mappedkv watch`: prints other processes' changes to a shared store as they happen.
///
/// It subscribes and then never touches the store, so every line it prints was pushed by the
/// library's change watcher. With the hidden `--cpu-report` it prints the CPU time the process used
/// while watching (how the watcher's idle cost in docs/bench/store.md is measured).
struct WatchCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "watch",
        abstract: "Print other processes' changes to a multi-process store as they happen.",
        discussion: """
            Prints "watching" once subscribed, then one line per change: its kind, the sequence and \
            the keys that changed ("all keys" after a rewrite, clear, trim or rekey). Runs until \
            interrupted, or for --seconds.
            """)

    @OptionGroup var store: StoreOptions
    @Option(name: .long, help: "Stop after this many seconds.")
    var seconds: Double?
    @Flag(name: .long, help: .hidden)
    var cpuReport = false

    func validate() throws {
        guard store.multiProcess else {
            throw ValidationError("watch needs --multi-process: only processes sharing the store can change it")
        }
        if let seconds, !(seconds > 0 && seconds.isFinite) { throw ValidationError("--seconds must be positive") }
    }

    func run() throws {
        let kv = try reportingErrors { try store.open(readOnly: true) }
        defer { kv.close() }
        // Unbuffered, so that each line reaches a pipe as soon as the change does.
        let output = FileHandle.standardOutput
        let observation = kv.observeExternalChanges { change in output.write(Data("\(change)\n".utf8)) }
        defer { observation.cancel() }
        output.write(Data("watching\n".utf8))
        let before = Self.cpuTime()
        let start = Date()
        if let seconds {
            Thread.sleep(forTimeInterval: seconds)
        } else {
            while true { Thread.sleep(forTimeInterval: 3600) }
        }
        if cpuReport {
            let used = Self.cpuTime() - before
            let elapsed = Date().timeIntervalSince(start)
            printError(
                String(
                    format: "cpu: %.3f ms over %.1f s (%.4f%% of one core)", used * 1000, elapsed,
                    used / elapsed * 100))
        }
    }

    /// User plus system CPU time of this process so far, in seconds.
    static func cpuTime() -> Double {
        var usage = rusage()
        guard getrusage(RUSAGE_SELF.rawValue, &usage) == 0 else { return 0 }
        func seconds(_ time: timeval) -> Double { Double(time.tv_sec) + Double(time.tv_usec) / 1_000_000 }
        return seconds(usage.ru_utime) + seconds(usage.ru_stime)
    }
}
