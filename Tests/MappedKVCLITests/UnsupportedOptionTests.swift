import Foundation
import Testing

/// `--crypt-key` and `--multi-process` are refused until encryption and multi-process mode exist.
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

    static let options: [[String]] = [["--crypt-key", "X"], ["--multi-process"]]

    @Test("the option is refused on every command with a 'not supported yet' message", arguments: options)
    func refusedEverywhere(_ option: [String]) throws {
        try TemporaryDirectory.with { tmp in
            let root = tmp.path("root")
            for command in Self.commands {
                let result = try CLI.fail([command.name] + CLI.store(root, "s") + option + command.arguments,
                                          stdin: command.stdin)
                #expect(saysNotSupportedYet(result.stderr), "\(result)")
                #expect(result.stderr.contains(option[0]), "the message should name \(option[0]): \(result)")
                #expect(result.stdout.isEmpty, "\(result)")
                #expect(!FileManager.default.fileExists(atPath: root), "\(command.name) \(option[0]) created the store")
            }
        }
    }

    @Test("refusing the option leaves an existing store unchanged", arguments: options)
    func refusedWithoutTouchingStore(_ option: [String]) throws {
        try TemporaryDirectory.with { tmp in
            let golden = GoldenCase.plain[0]
            let root = try tmp.copyStore(from: golden.root)
            let data = try Data(contentsOf: URL(fileURLWithPath: root + "/" + golden.id))
            let meta = try Data(contentsOf: URL(fileURLWithPath: root + "/" + golden.id + ".crc"))
            for command in Self.commands {
                let result = try CLI.fail([command.name] + CLI.store(root, golden.id) + option + command.arguments,
                                          stdin: command.stdin)
                #expect(saysNotSupportedYet(result.stderr), "\(result)")
            }
            #expect(try Data(contentsOf: URL(fileURLWithPath: root + "/" + golden.id)) == data)
            #expect(try Data(contentsOf: URL(fileURLWithPath: root + "/" + golden.id + ".crc")) == meta)
            #expect(try CLI.dump(root: root, id: golden.id) == String(decoding: try golden.expected(), as: UTF8.self))
        }
    }

    @Test("the encrypted golden stores are refused with their real keys", arguments: [
        ("b_crypt", "case_b", "MMKVKey0123456"), ("b16_crypt16", "case_b16", "MMKVKey012345678"),
    ])
    func encryptedGoldenRefused(_ name: String, _ id: String, _ key: String) throws {
        let golden = GoldenCase(name: name, id: id)
        let result = try CLI.fail(["dump"] + CLI.store(golden.root, golden.id) + ["--crypt-key", key])
        #expect(saysNotSupportedYet(result.stderr), "\(result)")
        #expect(result.stdout.isEmpty)
    }
}

/// Whether `message` says the feature is not supported yet ("not supported yet", "not supported by this version yet").
func saysNotSupportedYet(_ message: String) -> Bool {
    guard let range = message.range(of: "not supported") else { return false }
    return message[range.upperBound...].prefix(40).contains("yet")
}
