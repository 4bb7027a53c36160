import Foundation
import MappedKVProcessTestSupport
import Testing

/// `mappedkv dump` and `mappedkv apply` against the stores MMKV 2.4.2 wrote.
@Suite("Golden stores")
struct GoldenDumpTests {
    @Test("the test can find the mappedkv binary")
    func binaryIsFound() throws {
        let binary = try CLI.binary.get()
        #expect(FileManager.default.isExecutableFile(atPath: binary.path))
        let help = try CLI.succeed(["--help"])
        #expect(help.stdout.contains("dump"))
    }

    @Test("dump of a golden store equals its .expect byte for byte", arguments: GoldenCase.plain)
    func dumpMatchesExpect(_ golden: GoldenCase) throws {
        let result = try CLI.succeed(["dump"] + CLI.store(golden.root, golden.id))
        let expected = try golden.expected()
        #expect(result.stdoutData == expected, "dump differs from \(golden.id).expect:\n\(result.stdout)")
        #expect(result.stderr.isEmpty)
    }

    @Test("dump reads a golden store without changing its files", arguments: GoldenCase.plain)
    func dumpLeavesGoldenFilesAlone(_ golden: GoldenCase) throws {
        let data = try Data(contentsOf: URL(fileURLWithPath: golden.dataPath))
        let meta = try Data(contentsOf: URL(fileURLWithPath: golden.metaPath))
        try CLI.succeed(["dump"] + CLI.store(golden.root, golden.id))
        try CLI.succeed(["keys"] + CLI.store(golden.root, golden.id))
        try CLI.succeed(["verify"] + CLI.store(golden.root, golden.id))
        #expect(try Data(contentsOf: URL(fileURLWithPath: golden.dataPath)) == data)
        #expect(try Data(contentsOf: URL(fileURLWithPath: golden.metaPath)) == meta)
    }

    @Test("apply of script.txt to an empty root then dump equals the .expect", arguments: GoldenCase.plain)
    func applyScriptMatchesExpect(_ golden: GoldenCase) throws {
        try TemporaryDirectory.with { tmp in
            let root = tmp.path("root")
            let apply = try CLI.succeed(["apply", "--create"] + CLI.store(root, golden.id), stdin: try golden.script())
            #expect(apply.stderr.isEmpty)
            let dump = try CLI.succeed(["dump"] + CLI.store(root, golden.id))
            #expect(
                dump.stdoutData == (try golden.expected()), "dump differs from \(golden.id).expect:\n\(dump.stdout)")
            try CLI.succeed(["verify"] + CLI.store(root, golden.id))
        }
    }

    @Test("apply of script.txt on a copy of the golden store gives the same .expect", arguments: GoldenCase.plain)
    func applyScriptAgainOnCopy(_ golden: GoldenCase) throws {
        // Every script line sets a key to its final value again (or removes it again), so
        // re-applying the script over MMKV's own store must not change what the store holds.
        try TemporaryDirectory.with { tmp in
            let root = try tmp.copyStore(from: golden.root)
            try CLI.succeed(["apply", "--create"] + CLI.store(root, golden.id), stdin: try golden.script())
            let dump = try CLI.succeed(["dump"] + CLI.store(root, golden.id))
            #expect(
                dump.stdoutData == (try golden.expected()), "dump differs from \(golden.id).expect:\n\(dump.stdout)")
            try CLI.succeed(["verify"] + CLI.store(root, golden.id))
        }
    }

    @Test("apply of a CRLF script gives the same store as the LF script", arguments: GoldenCase.plain)
    func applyCRLFScript(_ golden: GoldenCase) throws {
        try TemporaryDirectory.with { tmp in
            let root = tmp.path("root")
            let script = try golden.script().replacingOccurrences(of: "\n", with: "\r\n")
            try CLI.succeed(["apply", "--create"] + CLI.store(root, golden.id), stdin: script)
            let dump = try CLI.succeed(["dump"] + CLI.store(root, golden.id))
            #expect(
                dump.stdoutData == (try golden.expected()), "dump differs from \(golden.id).expect:\n\(dump.stdout)")
        }
    }
}
