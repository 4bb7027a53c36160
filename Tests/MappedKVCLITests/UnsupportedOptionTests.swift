import Foundation
import Testing

/// `--multi-process` is refused until multi-process mode exists.
@Suite("Unsupported options")
struct UnsupportedOptionTests {
    /// Every subcommand that names a store, with its arguments after the store options and its input.
    static let commands: [(name: String, arguments: [String], stdin: String?)] = [
        ("dump", [], nil),
        ("keys", [], nil),
        ("info", [], nil),
        ("verify", [], nil),
        ("get", ["k"], nil),
        ("set", ["k", "v"], nil),
        ("remove", ["k"], nil),
        ("apply", [], "set-int32 k 1\n"),
    ]

    @Test("--multi-process is refused on every command with a 'not supported yet' message")
    func refusedEverywhere() throws {
        try TemporaryDirectory.with { tmp in
            let root = tmp.path("root")
            for command in Self.commands {
                let result = try CLI.fail([command.name] + CLI.store(root, "s") + ["--multi-process"] + command.arguments,
                                          stdin: command.stdin)
                #expect(saysNotSupportedYet(result.stderr), "\(result)")
                #expect(result.stderr.contains("--multi-process"), "the message should name the option: \(result)")
                #expect(result.stdout.isEmpty, "\(result)")
                #expect(!FileManager.default.fileExists(atPath: root), "\(command.name) --multi-process created the store")
            }
        }
    }

    @Test("refusing --multi-process leaves an existing store unchanged")
    func refusedWithoutTouchingStore() throws {
        try TemporaryDirectory.with { tmp in
            let golden = GoldenCase.plain[0]
            let root = try tmp.copyStore(from: golden.root)
            let data = try Data(contentsOf: URL(fileURLWithPath: root + "/" + golden.id))
            let meta = try Data(contentsOf: URL(fileURLWithPath: root + "/" + golden.id + ".crc"))
            for command in Self.commands {
                let result = try CLI.fail([command.name] + CLI.store(root, golden.id) + ["--multi-process"] + command.arguments,
                                          stdin: command.stdin)
                #expect(saysNotSupportedYet(result.stderr), "\(result)")
            }
            #expect(try Data(contentsOf: URL(fileURLWithPath: root + "/" + golden.id)) == data)
            #expect(try Data(contentsOf: URL(fileURLWithPath: root + "/" + golden.id + ".crc")) == meta)
            #expect(try CLI.dump(root: root, id: golden.id) == String(decoding: try golden.expected(), as: UTF8.self))
        }
    }
}

/// Whether `message` says the feature is not supported yet ("not supported yet", "not supported by this version yet").
func saysNotSupportedYet(_ message: String) -> Bool {
    guard let range = message.range(of: "not supported") else { return false }
    return message[range.upperBound...].prefix(40).contains("yet")
}
