import Foundation
import Glibc
import MappedKV
import MappedKVProcessTestSupport
import Testing

// The shared-memory lock mode (ProcessLock.sharedMemory, docs/FORMAT.md 6.6) against real
// `mappedkv` processes: an open in the other mode is refused while a process shares the store in
// one; the store returns to flock once nobody shares it through the lock file; a holder killed with
// SIGKILL while it holds the lock is taken over, and nothing it had written is lost.

@Suite("Shared-memory lock across processes", .serialized, .timeLimit(.minutes(3)))
struct SharedMemoryLockProcessTests {
    func arguments(_ root: String, _ lock: ProcessLock) -> [String] {
        CLI.store(root, "s") + ["--multi-process", "--lock", lock == .flock ? "flock" : "shared-memory"]
    }

    /// The process ID in the lock word of the store's lock file (0 when free).
    func lockHolder(_ root: String) throws -> Int32 {
        let bytes = try Data(contentsOf: URL(fileURLWithPath: root + "/s.lock"))
        let word = bytes.withUnsafeBytes { UInt64(littleEndian: $0.loadUnaligned(fromByteOffset: 8, as: UInt64.self)) }
        return Int32(truncatingIfNeeded: word >> 32)  // the holder's process ID is the word's high half
    }

    @Test("while a process shares the store in one mode, an open in the other is refused with exit 6")
    func modeConflicts() throws {
        try TemporaryDirectory.with { tmp in
            let root = tmp.path("root")
            let fast = try HeldStore(arguments(root, .sharedMemory))
            let refused = try CLI.fail(["set"] + arguments(root, .flock) + ["k", "v"])
            #expect(refused.status == 6, "\(refused)")
            #expect(refused.stderr.contains("shares it through the shared-memory lock"), "\(refused)")
            #expect(throws: MappedKVError.self) {
                try MappedKV(id: "s", directory: root, configuration: Configuration(isMultiProcess: true))
            }
            let single = try CLI.fail(["set", "--root", root, "--id", "s", "k", "v"])
            #expect(single.status == 6, "\(single)")
            try CLI.succeed(["set"] + arguments(root, .sharedMemory) + ["k", "fast"])
            #expect(fast.release() == 0)

            let compatible = try HeldStore(arguments(root, .flock))
            let refusedFast = try CLI.fail(["set"] + arguments(root, .sharedMemory) + ["k", "v"])
            #expect(refusedFast.status == 6, "\(refusedFast)")
            #expect(refusedFast.stderr.contains("shares it through flock"), "\(refusedFast)")
            #expect(compatible.release() == 0)
            #expect(try CLI.succeed(["get"] + arguments(root, .flock) + ["k"]).stdout == "fast\n")
        }
    }

    @Test("the lock file lives while the store is shared through it; a flock open after that removes it")
    func returnsToFlock() throws {
        try TemporaryDirectory.with { tmp in
            let root = tmp.path("root")
            let lockFile = root + "/s.lock"
            try CLI.succeed(["set", "--create"] + arguments(root, .sharedMemory) + ["a", "1"])
            #expect(FileManager.default.fileExists(atPath: lockFile))
            try CLI.succeed(["set"] + arguments(root, .flock) + ["b", "2"])
            #expect(!FileManager.default.fileExists(atPath: lockFile))
            try CLI.succeed(["set"] + arguments(root, .sharedMemory) + ["c", "3"])
            #expect(FileManager.default.fileExists(atPath: lockFile))
            let keys = try CLI.succeed(["keys"] + arguments(root, .sharedMemory))
            #expect(keys.stdout.split(separator: "\n").sorted() == ["a", "b", "c"], "\(keys)")
        }
    }

    @Test("a process killed while it holds the lock is taken over; its writes are kept and the store verifies")
    func killedHolder() throws {
        try TemporaryDirectory.with { tmp in
            let root = tmp.path("root")
            try CLI.succeed(["set", "--create"] + arguments(root, .sharedMemory) + ["before", "1"])
            let holder = try HeldStore(arguments(root, .sharedMemory) + ["--exclusive"])
            let pid = holder.process.processIdentifier
            #expect(try lockHolder(root) == pid, "the child holds the lock")
            kill(pid, SIGKILL)
            holder.process.waitUntilExit()
            #expect(try lockHolder(root) == pid, "a killed holder does not release the lock")
            // This waits for the lock until it finds the holder gone (the suite's time limit guards a hang).
            try CLI.succeed(["set"] + arguments(root, .sharedMemory) + ["after", "2"])
            #expect(try lockHolder(root) == 0)
            #expect(try CLI.succeed(["get"] + arguments(root, .sharedMemory) + ["before"]).stdout == "1\n")
            #expect(try CLI.succeed(["get"] + arguments(root, .sharedMemory) + ["after"]).stdout == "2\n")
            try CLI.succeed(["verify", "--root", root, "--id", "s"])
        }
    }

    @Test("one process cannot open a store with both locks at once")
    func oneProcessOneLock() throws {
        try TemporaryDirectory.with { tmp in
            let root = tmp.path("root")
            let fast = try MappedKV(
                id: "s", directory: root, configuration: Configuration(isMultiProcess: true, processLock: .sharedMemory)
            )
            defer { fast.close() }
            let error = #expect(throws: MappedKVError.self) {
                try MappedKV(id: "s", directory: root, configuration: Configuration(isMultiProcess: true))
            }
            guard case .modeConflict(_, let reason) = error else {
                Issue.record("expected a mode conflict, got \(String(describing: error))")
                return
            }
            #expect(reason.contains("processLock"), "\(reason)")
        }
    }
}
