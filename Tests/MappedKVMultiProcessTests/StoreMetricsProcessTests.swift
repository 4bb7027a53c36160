import Foundation
import MappedKV
import MappedKVProcessTestSupport
import MetricsTestKit
import Testing

/// A store's `store.reloads` metric counts catch-ups with another, real process's writes: the
/// `mappedkv` binary writes, this process reads through the library.
@Suite("Store metrics across processes", .serialized)
struct StoreMetricsProcessTests {
    @Test("another process's append and rewrite are counted as an appended and a reloaded catch-up")
    func reloadsFromAnotherProcess() throws {
        try TemporaryDirectory.with { (tmp) throws -> Void in
            let root = tmp.path("root")
            let factory = TestMetrics()
            let store = try MappedKV(
                id: "s", directory: root,
                configuration: Configuration(
                    isMultiProcess: true, metrics: MetricsOptions(labelPrefix: "kv", factory: factory)))
            defer { store.close() }
            try store.set("mine", forKey: "a")
            func reloads(_ change: String) -> Int64 {
                factory.counterTotal(label: "kv.store.reloads", dimensions: [("change", change)])
            }
            #expect(reloads("appended") == 0 && reloads("reloaded") == 0)

            try CLI.succeed(["set"] + CLI.store(root, "s") + ["--multi-process", "b", "theirs"])
            #expect(try store.string(forKey: "b") == "theirs")
            #expect(reloads("appended") == 1)
            #expect(reloads("reloaded") == 0)

            try CLI.succeed(["rekey"] + CLI.store(root, "s") + ["--multi-process"])  // a full write-back
            #expect(try store.string(forKey: "a") == "mine")
            #expect(reloads("appended") == 1)
            #expect(reloads("reloaded") == 1)
            // Reading again finds nothing new.
            #expect(try store.string(forKey: "b") == "theirs")
            #expect(reloads("appended") + reloads("reloaded") == 2)
        }
    }
}
