import Foundation
import MappedKV
import Synchronization
import Testing

/// Batches seen from another process: `mappedkv remove` with several keys is one
/// `removeValues(forKeys:)`, and this process must see it as one change carrying every record.
@Suite("Batch writes across processes", .serialized)
struct BatchProcessTests {
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
            #expect(changes.seen.withLock { $0 } == [.appended(records: 3)])
        }
    }
}
