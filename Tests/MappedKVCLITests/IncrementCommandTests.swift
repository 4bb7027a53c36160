import Foundation
import MappedKVProcessTestSupport
import Testing

/// `mappedkv increment` on a key that holds something else. (Counters across processes are in
/// MappedKVMultiProcessTests' CounterProcessTests.)
@Suite("increment command")
struct IncrementCommandTests {
    @Test("a key that is not a counter is an error and is kept")
    func notACounter() throws {
        try TemporaryDirectory.with { tmp in
            let root = tmp.path("root")
            try CLI.succeed(["set", "--create"] + CLI.store(root, "c") + ["name", "ten"])
            let result = try CLI.fail(["increment"] + CLI.store(root, "c") + ["name"])
            #expect(result.stderr.contains("not a counter"))
            #expect(try CLI.succeed(["get"] + CLI.store(root, "c") + ["name"]).stdout.contains("ten"))
        }
    }
}
