import ArgumentParser
import MappedKV

/// `mappedkv set`: stores one value.
struct SetCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "set", abstract: "Store VALUE under KEY as --type.",
        discussion: "bytes and payload take hex; strings takes comma-separated items.")

    @OptionGroup var store: StoreOptions
    @Option(name: .long, help: "The value's type: \(ValueType.allCases.map(\.rawValue).joined(separator: ", ")).")
    var type: ValueType = .string

    @Option(
        name: .long, help: "Expire the value after this many seconds (0: never); needs key expiry on (see 'expire').")
    var expireAfter: UInt32?
    /// Collected without option parsing so that negative numbers (`-42`) are values, not options.
    @Argument(parsing: .allUnrecognized, help: ArgumentHelp("The key, then the value.", valueName: "key value"))
    var keyAndValue: [String] = []

    /// KEY and VALUE, without the `--` separator that callers may still write.
    private var positionals: [String] {
        keyAndValue.count == 3 && keyAndValue[0] == "--" ? Array(keyAndValue.dropFirst()) : keyAndValue
    }
    var key: String { positionals[0] }
    var value: String { positionals[1] }

    func validate() throws {
        guard positionals.count == 2 else {
            throw ValidationError("expected KEY and VALUE, got \(positionals.count) argument(s): \(positionals)")
        }
    }

    func run() throws {
        let kv = try reportingErrors { try store.open(readOnly: false) }
        defer { kv.close() }
        let stored = try reportingErrors { try type.set(value, forKey: key, in: kv, expiresAfter: expireAfter) }
        guard stored else {
            printError("'\(value)' is not a valid \(type.rawValue)")
            throw ExitCode.failure
        }
    }
}
