import ArgumentParser
import MappedKV

/// `mappedkv stress-child`: one child process of `mappedkv stress` (hidden; started by it).
struct StressChildCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "stress-child", abstract: "One child of a stress run (started by 'stress').", shouldDisplay: false)

    @Option(name: .long, help: "The stress run's directory.")
    var root: String
    @Option(name: .long, help: "The store's ID.")
    var id = "stress"
    @Option(name: .long, help: "This child's index.")
    var child: Int
    @Option(name: .long, help: "How many children the run has.")
    var processes = 1
    @Option(name: .long, help: "Acknowledged operations to reach, over all incarnations.")
    var ops: Int
    @Option(name: .long, help: "The run's seed.")
    var seed: UInt64
    @Option(name: .long, help: "How many times this child was restarted before.")
    var incarnation = 0
    /// The store's key and inter-process lock, as `stress` was given them.
    @OptionGroup var access: StoreAccessOptions
    @Option(name: .long, help: "The operations to perform.")
    var workload: StressWorkload = .mixed
    @Option(name: .long, help: "Wait for end-of-file on this descriptor before opening the store.")
    var barrierFd: Int32?
    @Option(name: .long, help: "The cache workload's byte limit.")
    var byteLimit: Int?
    @Flag(name: .long, help: "The cache workload without a memory tier.")
    var diskOnly = false

    func validate() throws {
        guard child >= 0, child < processes else { throw ValidationError("--child must be in 0..<--processes") }
        guard ops > 0 else { throw ValidationError("--ops must be positive") }
        if let byteLimit, byteLimit < 0 { throw ValidationError("--byte-limit must not be negative") }
    }

    func run() throws {
        let key = try access.resolvedKey()
        do {
            if workload == .cache {
                let settings = CacheStressWorker.Settings(
                    root: root, child: child, operations: ops, seed: seed, incarnation: incarnation, cryptKey: key,
                    byteLimit: byteLimit, diskOnly: diskOnly)
                try CacheStressWorker(settings: settings).run(barrier: barrierFd)
            } else {
                let settings = StressWorker.Settings(
                    root: root, id: id, child: child, processes: processes, operations: ops, seed: seed,
                    incarnation: incarnation, workload: workload, cryptKey: key, processLock: access.lock)
                try StressWorker(settings: settings).run(barrier: barrierFd)
            }
        } catch let failure as StressChildFailure {
            printError(failure.message)
            throw ExitCode.failure
        } catch {
            printError("stress child \(child): \(error)")
            throw ExitCode(2)
        }
    }
}
