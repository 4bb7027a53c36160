import Foundation
import MappedKV
import MappedKVProcessTestSupport
import Synchronization
import Testing

/// MMKV parity features seen across processes: `mappedkv remove` with several keys is one
/// `removeValues(forKeys:)`, which this process must see as one change carrying every record;
/// a store whose memory was released reloads what another process wrote meanwhile.
@Suite("Parity features across processes", .serialized)
struct ParityProcessTests {
    final class Changes: Sendable {
        let seen = Mutex<[ExternalChange.Kind]>([])
        func record(_ change: ExternalChange) { seen.withLock { $0.append(change.kind) } }
    }

    @Test("a batch removal by another process arrives as one change with all its records")
    func batchRemovalIsOneChange() throws {
        try TemporaryDirectory.with { (tmp) throws -> Void in
            let root = tmp.path("root")
            let store = try MappedKV(id: "s", directory: root, configuration: Configuration(isMultiProcess: true))
            for key in ["a", "b", "c", "d"] { try store.set(key, forKey: key) }
            let changes = Changes()
            let observation = store.observeExternalChanges(changes.record)
            defer { observation.cancel() }
            try CLI.succeed(["remove"] + CLI.store(root, "s") + ["--multi-process", "a", "b", "c", "zz"])
            #expect(try store.allKeys == ["d"])
            // The read reports the change before returning unless the watcher was delivering it at
            // that moment (then the watcher does): wait for every change noticed to be delivered.
            try store.synchronizeChanges()
            #expect(changes.seen.withLock { $0 } == [.appended(records: 3)])
        }
    }

    @Test("a store whose memory was released sees another process's writes at its next access")
    func releasedMemoryReloads() throws {
        try TemporaryDirectory.with { (tmp) throws -> Void in
            let root = tmp.path("root")
            let store = try MappedKV(id: "s", directory: root, configuration: Configuration(isMultiProcess: true))
            try store.set("mine", forKey: "a")
            try store.releaseMemory()
            try CLI.succeed(
                ["apply", "--create"] + CLI.store(root, "s") + ["--multi-process"], stdin: "set-string b theirs\ntrim\n"
            )
            #expect(try store.allKeys == ["a", "b"])
            #expect(try store.string(forKey: "b") == "theirs")
            try store.releaseMemory()
            try store.set("again", forKey: "c")
            #expect(try store.count == 3)
        }
    }
}
