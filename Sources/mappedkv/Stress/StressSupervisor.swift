import Foundation
import Glibc
import MappedKV

/// The parent side of a stress run: spawns the children of the same binary behind a start
/// barrier, kills and restarts them on a schedule if asked, reaps them, and reports progress.
final class StressSupervisor {
    /// What to run.
    struct Settings: Sendable {
        /// The run's root directory (it exists).
        var root: String
        /// The store's ID.
        var id: String
        /// How many children to run.
        var processes: Int
        /// Acknowledged operations per child.
        var operations: Int
        /// The run's seed.
        var seed: UInt64
        /// The children's workload.
        var workload: StressWorkload
        /// The store options to pass on to the children (`--crypt-key K`, `--aes256`, `--lock L`).
        var storeArguments: [String]
        /// Further options of the workload to pass on to the children (`--byte-limit N`), if any.
        var workloadArguments: [String] = []
        /// How often to kill a random running child with SIGKILL, or nil never to.
        var killInterval: Duration?
    }

    /// What happened to the children.
    struct Outcome: Sendable {
        /// The children killed by the supervisor (and restarted).
        var kills: Int
        /// Kills that left a write-back journal behind: the child died during a full write-back.
        var killsInWriteBack: Int = 0
        /// Children that failed on their own: non-zero exits, crashes, spawn failures.
        var violations: [String]
        /// Wall time from the first spawn until the last child ended.
        var elapsed: Duration
    }

    /// One child index and its current incarnation.
    private struct Slot {
        var index: Int
        var incarnation = 0
        var process: ChildProcess?
        /// Whether the child is done (successfully or not).
        var isOver = false
        /// The child's acknowledged operations when the current incarnation started.
        var acknowledgedAtSpawn = 0
        /// How many incarnations in a row were killed before acknowledging an operation.
        var fruitlessKills = 0
    }

    /// A child killed this many times in a row before acknowledging an operation is spared until
    /// it acknowledges one: otherwise a kill interval shorter than a child's start-up (exec and
    /// store open) would kill the last children forever.
    static let fruitlessKillLimit = 3

    /// The binary the children run: this one.
    private static let executable = "/proc/self/exe"

    private let settings: Settings
    private var slots: [Slot]
    private var random: StressRandom
    private var kills = 0
    private var killsInWriteBack = 0
    /// The size and last bytes of the last interrupted write-back journal counted.
    private var lastCountedJournal: [UInt8]?
    private var violations: [String] = []
    private var progress: StressProgress
    private let environment = ProcessInfo.processInfo.environment

    /// A supervisor for `settings`.
    init(settings: Settings) {
        self.settings = settings
        slots = (0..<settings.processes).map { Slot(index: $0) }
        random = StressRandom(seed: settings.seed ^ 0x5EED_0F_C11D)
        progress = StressProgress(root: settings.root, processes: settings.processes)
    }

    /// The standard error file of child `index`, shared by its incarnations.
    static func stderrPath(root: String, child index: Int) -> String { root + "/stress-\(index).stderr" }

    /// Runs the children until every one has ended.
    func run() throws -> Outcome {
        let clock = ContinuousClock()
        let start = clock.now
        let barrier = try StartBarrier()
        for index in slots.indices { spawn(index, barrier: barrier.readEnd) }
        barrier.release()

        do {
            try supervise(clock: clock, start: start)
        } catch {
            stopAll()
            throw error
        }
        return Outcome(
            kills: kills, killsInWriteBack: killsInWriteBack, violations: violations, elapsed: clock.now - start)
    }

    /// Reaps, kills and restarts the children, and reports progress, until every child has ended.
    private func supervise(clock: ContinuousClock, start: ContinuousClock.Instant) throws {
        var nextKill = settings.killInterval.map { start + $0 }
        var nextReport = start + .seconds(1)
        while slots.contains(where: { !$0.isOver }) {
            for index in slots.indices where !slots[index].isOver {
                if let status = try slots[index].process?.poll() { ended(index, status) }
            }
            if let killAt = nextKill, let interval = settings.killInterval, clock.now >= killAt {
                try killRandomChild()
                nextKill = clock.now + interval
            }
            if clock.now >= nextReport {
                let seconds = (clock.now - start).components.seconds
                report(
                    "stress: \(seconds) s, \(progress.acknowledged()) of \(settings.processes * settings.operations) operations acknowledged, \(kills) kills"
                )
                nextReport = nextReport + .seconds(1)
            }
            var wake = min(nextReport, clock.now + .milliseconds(5))
            if let nextKill { wake = min(wake, nextKill) }
            let pause = wake - clock.now
            if pause > .zero { usleep(UInt32(pause / .microseconds(1))) }
        }
    }

    /// Kills and reaps every running child (after the supervisor itself failed).
    private func stopAll() {
        for index in slots.indices {
            guard let process = slots[index].process else { continue }
            process.kill(SIGKILL)
            _ = try? process.wait()
            slots[index].process = nil
            slots[index].isOver = true
        }
    }

    /// Kills a random running child with SIGKILL, reaps it and restarts it; a child that turns
    /// out to have ended on its own is handled as such. Children at the ``fruitlessKillLimit``
    /// are spared.
    private func killRandomChild() throws {
        let candidates = slots.indices.filter { index in
            guard !slots[index].isOver, slots[index].process != nil else { return false }
            return slots[index].fruitlessKills < Self.fruitlessKillLimit
                || progress.acknowledged(child: index) > slots[index].acknowledgedAtSpawn
        }
        guard let index = candidates.randomElement(using: &random), let process = slots[index].process else { return }
        process.kill(SIGKILL)
        let status = try process.wait()
        guard status == .signaled(SIGKILL) else { return ended(index, status) }
        kills += 1
        if let journal = interruptedWriteBackJournal(), journal != lastCountedJournal {
            killsInWriteBack += 1
            lastCountedJournal = journal
        }
        let acknowledged = progress.acknowledged(child: index)
        slots[index].fruitlessKills =
            acknowledged > slots[index].acknowledgedAtSpawn ? 0 : slots[index].fruitlessKills + 1
        slots[index].acknowledgedAtSpawn = acknowledged
        slots[index].incarnation += 1
        spawn(index, barrier: nil)
    }

    /// The identity (size and last 8 bytes) of a write-back journal left by a dead child, if there
    /// is one: looked for under a shared `flock` on the meta file, so a live child's write-back
    /// (which removes its journal before unlocking) is never mistaken for one.
    private func interruptedWriteBackJournal() -> [UInt8]? {
        guard let bytes = try? StoreInspector.interruptedWriteBackJournal(id: settings.id, directory: settings.root)
        else { return nil }
        return withUnsafeBytes(of: UInt64(bytes.count)) { Array($0) } + Array(bytes.suffix(8))
    }

    /// Records how child `index` ended on its own.
    private func ended(_ index: Int, _ status: WaitStatus) {
        slots[index].process = nil
        slots[index].isOver = true
        guard status != .exited(0) else { return }
        let slot = slots[index]
        violations.append(
            "child \(index) (incarnation \(slot.incarnation)) \(status); its standard error: \(stderrTail(index))")
    }

    /// Starts incarnation `slots[index].incarnation` of child `index`, behind the barrier whose
    /// read end is `barrier` if given.
    private func spawn(_ index: Int, barrier: Int32?) {
        let slot = slots[index]
        var arguments =
            [
                "stress-child", "--root", settings.root, "--id", settings.id, "--child", "\(index)",
                "--processes", "\(settings.processes)", "--ops", "\(settings.operations)", "--seed", "\(settings.seed)",
                "--workload", settings.workload.rawValue, "--incarnation", "\(slot.incarnation)",
            ] + settings.storeArguments + settings.workloadArguments
        var actions: [ChildProcess.FileAction] = [
            .open("/dev/null", flags: O_RDONLY, onto: 0),
            .open("/dev/null", flags: O_WRONLY, onto: 1),
            .open(Self.stderrPath(root: settings.root, child: index), flags: O_WRONLY | O_CREAT | O_APPEND, onto: 2),
        ]
        if let barrier {
            actions.append(.duplicate(barrier, onto: StartBarrier.childDescriptor))
            arguments += ["--barrier-fd", "\(StartBarrier.childDescriptor)"]
        }
        do {
            slots[index].process = try ChildProcess.spawn(
                executable: Self.executable, name: "mappedkv", arguments: arguments,
                environment: environment, fileActions: actions)
        } catch {
            slots[index].isOver = true
            violations.append("child \(index) (incarnation \(slot.incarnation)) could not be started: \(error)")
        }
    }

    /// The end of child `index`'s standard error, on one line.
    private func stderrTail(_ index: Int) -> String {
        guard let data = FileManager.default.contents(atPath: Self.stderrPath(root: settings.root, child: index)) else {
            return "(none)"
        }
        let text = String(decoding: data.suffix(2000), as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        return text.isEmpty ? "(empty)" : text.split(whereSeparator: \.isNewline).joined(separator: " | ")
    }

    /// Writes `line` to standard error.
    private func report(_ line: String) {
        FileHandle.standardError.write(Data((line + "\n").utf8))
    }
}
