// Every command that opens or locks a store takes the one set of store options (the key options,
// --multi-process, --lock, --verbose): each case runs the real binary on a real store with the
// whole set, and checks that the command does its work, that an option it has no use for is
// named in one note on standard error, and that no other option is.

import Foundation
import MappedKVProcessTestSupport
import Testing

/// One command of the audit: its arguments and what it must say about the shared options.
struct OptionSetCase: Sendable, CustomTestStringConvertible {
    /// What exists before the command runs, created with the same options.
    enum Setup: Sendable {
        /// Nothing: the command makes its own store.
        case none
        /// Store `prefs` in `{root}` holding `a` = `1`.
        case store
        /// The same, backed up into `{backup}`.
        case storeWithBackup
        /// Collection store `prefs` in `{root}` holding `k` = `{"n":1}` in bucket `b`.
        case collections
        /// Disk cache in `{dir}` holding `k` = `v`.
        case cache
    }

    var command: [String]
    var setup: Setup = .store
    /// The store options given; `{key}` is the environment variable holding the key.
    var options: [String] = OptionSetCase.everyOption
    var stdin: String? = nil
    /// The options the command must name as having no effect, as they are spelled in its note.
    var notes: [String] = []
    /// Text that standard output must contain.
    var output: String = ""

    static let everyOption = [
        "--multi-process", "--lock", "flock", "--crypt-key-env", "MAPPEDKV_OPTION_SET_KEY", "--aes256", "--verbose",
    ]
    static let keyVariable = "MAPPEDKV_OPTION_SET_KEY"

    var testDescription: String { (command + options).joined(separator: " ") }

    /// The arguments with `{root}`, `{backup}` and `{dir}` replaced by paths under `tmp`.
    func arguments(_ words: [String], in tmp: TemporaryDirectory) -> [String] {
        words.map {
            $0.replacingOccurrences(of: "{root}", with: tmp.path("root"))
                .replacingOccurrences(of: "{backup}", with: tmp.path("backup"))
                .replacingOccurrences(of: "{dir}", with: tmp.path("cache"))
        }
    }
}

@Suite("One set of store options")
struct StoreOptionSetTests {
    static let store = ["--root", "{root}", "--id", "prefs"]
    static let inspection = ["--multi-process", "--lock flock", "--verbose"]
    static let cases: [OptionSetCase] = [
        OptionSetCase(command: ["get"] + store + ["a"], output: "1"),
        OptionSetCase(command: ["set"] + store + ["b", "2"]),
        OptionSetCase(command: ["remove"] + store + ["a"]),
        OptionSetCase(command: ["keys"] + store, output: "a"),
        OptionSetCase(command: ["dump"] + store, output: "a"),
        OptionSetCase(command: ["export"] + store, output: "\"a\""),
        OptionSetCase(command: ["import"] + store, stdin: "", output: "imported 0 entries"),
        OptionSetCase(command: ["apply"] + store, stdin: "set-int32 n 5\n"),
        OptionSetCase(command: ["rekey"] + store + ["--new-key", "other"]),
        OptionSetCase(command: ["expire"] + store + ["--enable"]),
        OptionSetCase(command: ["hold"] + store, stdin: "", output: "ready"),
        OptionSetCase(command: ["watch"] + store + ["--seconds", "0.1"], output: "watching"),
        OptionSetCase(command: ["info"] + store, notes: inspection, output: "keys\t1"),
        OptionSetCase(command: ["verify"] + store, notes: inspection, output: "status: sound"),
        OptionSetCase(command: ["repair"] + store, output: "nothing to repair"),
        OptionSetCase(
            command: ["backup"] + store + ["--to", "{backup}"],
            notes: ["--multi-process", "--lock flock", "--crypt-key-env --aes256", "--verbose"],
            output: "backed up 1 store"),
        OptionSetCase(
            command: ["restore"] + store + ["--from", "{backup}"], setup: .storeWithBackup,
            notes: ["--multi-process", "--lock flock", "--verbose"], output: "restored 1 store"),
        OptionSetCase(
            command: ["rm-store"] + store, notes: ["--multi-process", "--lock flock", "--crypt-key-env --aes256"],
            output: "removed prefs"),
        OptionSetCase(command: ["bucket", "put"] + store + ["b", "k2", "{\"n\":2}"], setup: .collections),
        OptionSetCase(command: ["bucket", "get"] + store + ["b", "k"], setup: .collections, output: "\"n\":1"),
        OptionSetCase(command: ["bucket", "rm"] + store + ["b", "k"], setup: .collections),
        OptionSetCase(command: ["bucket", "ls"] + store + ["b"], setup: .collections, output: "k"),
        OptionSetCase(
            command: ["bucket", "index", "add"] + store + ["b", "n", "int", "value.n"], setup: .collections),
        OptionSetCase(command: ["bucket", "index", "ls"] + store, setup: .collections),
        OptionSetCase(command: ["bucket", "count"] + store + ["b"], setup: .collections, output: "1"),
        OptionSetCase(command: ["bucket", "clear"] + store + ["b"], setup: .collections, output: "removed 1 entries"),
        OptionSetCase(command: ["bucket", "query"] + store + ["b", "--count"], setup: .collections, output: "1"),
        OptionSetCase(
            command: ["bucket", "import"] + store, setup: .collections, stdin: "", output: "imported 0 entries"),
        OptionSetCase(command: ["bucket", "export"] + store, setup: .collections, output: "\"n\":1"),
        OptionSetCase(
            command: ["cache", "put", "--dir", "{dir}", "k2", "v2"], setup: .cache, notes: ["--multi-process"]),
        OptionSetCase(command: ["cache", "get", "--dir", "{dir}", "k"], setup: .cache, notes: ["--multi-process"]),
        OptionSetCase(command: ["cache", "rm", "--dir", "{dir}", "k"], setup: .cache, notes: ["--multi-process"]),
        OptionSetCase(command: ["cache", "ls", "--dir", "{dir}"], setup: .cache, notes: ["--multi-process"]),
        OptionSetCase(command: ["cache", "stats", "--dir", "{dir}"], setup: .cache, notes: ["--multi-process"]),
        OptionSetCase(command: ["cache", "trim", "--dir", "{dir}"], setup: .cache, notes: ["--multi-process"]),
        OptionSetCase(command: ["cache", "verify", "--dir", "{dir}"], setup: .cache, notes: ["--multi-process"]),
        OptionSetCase(
            command: ["bench", "--root", "{root}", "--n", "50", "--small-sets", "50"], setup: .none,
            output: "set_int32"),
        OptionSetCase(
            command: ["stress", "--root", "{root}", "--processes", "2", "--ops", "20", "--seed", "7"], setup: .none,
            notes: ["--multi-process", "--verbose"]),
        OptionSetCase(
            command: ["demo", "--root", "{root}"], setup: .none,
            notes: ["--multi-process", "--lock flock", "--crypt-key-env --aes256", "--verbose"],
            output: "values intact"),
        // A single-process open has no use for --lock, and says so.
        OptionSetCase(
            command: ["get"] + store + ["a"],
            options: ["--lock", "shared-memory", "--crypt-key-env", "{key}", "--aes256"],
            notes: ["--lock shared-memory"], output: "1"),
    ]

    @Test(arguments: cases)
    func theWholeSetParsesAndAnUnusedOptionIsNoted(_ testCase: OptionSetCase) throws {
        try TemporaryDirectory.with { (tmp) throws -> Void in
            let environment = [OptionSetCase.keyVariable: "option-set-key"]
            let options = testCase.options.map { $0 == "{key}" ? OptionSetCase.keyVariable : $0 }
            for setup in Self.setupCommands(testCase.setup) {
                let result = try CLI.run(
                    testCase.arguments(setup + OptionSetCase.everyOption, in: tmp), environment: environment)
                try #require(result.succeeded, "setup failed: \(result)")
            }
            let result = try CLI.run(
                testCase.arguments(testCase.command + options, in: tmp), stdin: testCase.stdin,
                environment: environment)
            #expect(result.succeeded, "\(result)")
            #expect(testCase.output.isEmpty || result.stdout.contains(testCase.output), "\(result)")
            let notes = result.stderr.split(separator: "\n").filter { $0.contains("has no effect") }
            #expect(notes.count == testCase.notes.count, "\(result)")
            for option in testCase.notes {
                let command = testCase.command[0] == "cache" ? "cache commands" : testCase.command[0]
                let named = notes.contains {
                    $0.hasPrefix("mappedkv: note: \(option) has no effect on \(command): ")
                        || $0.hasPrefix("mappedkv: note: \(option) has no effect without --multi-process: ")
                }
                #expect(named, "no note for \(option): \(result)")
            }
        }
    }

    /// The commands that make what `setup` describes, before the store options.
    static func setupCommands(_ setup: OptionSetCase.Setup) -> [[String]] {
        switch setup {
        case .none: []
        case .store: [["set", "--create"] + store + ["a", "1"]]
        case .storeWithBackup: [["set", "--create"] + store + ["a", "1"], ["backup"] + store + ["--to", "{backup}"]]
        case .collections: [["bucket", "put", "--create"] + store + ["b", "k", "{\"n\":1}"]]
        case .cache: [["cache", "put", "--dir", "{dir}", "k", "v"]]
        }
    }

    @Test func restoreStillChecksTheCopyWithTheKeyItIsGiven() throws {
        try TemporaryDirectory.with { (tmp) throws -> Void in
            let root = tmp.path("root")
            let backup = tmp.path("backup")
            let environment = [OptionSetCase.keyVariable: "option-set-key"]
            let key = ["--crypt-key-env", OptionSetCase.keyVariable, "--aes256"]
            try #require(
                try CLI.run(
                    ["set", "--create"] + CLI.store(root, "prefs") + key + ["a", "1"], environment: environment
                )
                .succeeded)
            try CLI.succeed(["backup", "--multi-process"] + CLI.store(root, "prefs") + ["--to", backup])
            let wrong = try CLI.run(
                ["restore", "--multi-process"] + CLI.store(root, "prefs") + ["--from", backup, "--crypt-key", "wrong"])
            #expect(wrong.failedCleanly && wrong.stderr.contains("has no effect on restore"), "\(wrong)")
            let kept = try CLI.run(["get"] + CLI.store(root, "prefs") + key + ["a"], environment: environment)
            #expect(kept.succeeded && kept.stdout == "1\n", "\(kept)")
        }
    }
}
