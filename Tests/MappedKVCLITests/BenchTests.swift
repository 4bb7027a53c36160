import Foundation
import MappedKVProcessTestSupport
import Testing

/// `mappedkv bench` keeps working: a tiny run prints every workload once, with a positive figure.
/// (No timing assertions: speed is measured in release builds, not in tests.)
@Suite("Bench command")
struct BenchTests {
    @Test(
        "bench prints each workload's NAME<TAB>VALUE line", arguments: [[], ["--multi-process"], ["--crypt-key", "k"]])
    func benchRuns(_ extra: [String]) throws {
        try TemporaryDirectory.with { tmp in
            let result = try CLI.succeed(["bench", "--root", tmp.path, "--n", "200", "--small-sets", "2000"] + extra)
            var names: [String] = []
            for line in result.stdout.split(separator: "\n") {
                let fields = line.split(separator: "\t")
                guard fields.count == 2 else { continue }
                names.append(String(fields[0]))
                let value = try #require(Double(fields[1]), "not a number: \(line)")
                #expect(value > 0, "\(line)")
            }
            #expect(
                names == [
                    "set_int32", "set_string", "get_int32", "get_int32_random", "batch_get_int32", "get_string",
                    "remove", "reopen_load", "batch_set_int32", "small_set_int32",
                ], "\(result)")
        }
    }
}
