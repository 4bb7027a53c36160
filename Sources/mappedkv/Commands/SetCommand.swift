import ArgumentParser
import MappedKV

/// `mappedkv set`: stores one value.
struct SetCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "set", abstract: "Store VALUE under KEY as --type (a string unless told otherwise).",
        discussion: """
            bytes and payload take hex; strings takes comma-separated items. A store that does not \
            exist is created only with --create (otherwise exit 3), so a mistyped --root or --id is \
            reported instead of starting an empty store. \(ExitStatus.helpText)
            """)

    @OptionGroup var store: StoreOptions
    @Option(name: .long, help: "The value's type: \(ValueType.names).")
    var type: ValueType = .string
    @Flag(name: .long, help: "Create the store if it does not exist.")
    var create = false

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
        if type.payload(fromText: value) == nil {
            throw ValidationError("'\(value)' is not a valid \(type.rawValue)")
        }
    }

    func run() throws {
        guard let payload = type.payload(fromText: value) else { throw ExitStatus.failure.exitCode }
        let kv = try reportingErrors(suggestingCreate: true) { try store.open(readOnly: false, create: create) }
        defer { kv.close() }
        try reportingErrors {
            if let expireAfter {
                try kv.set(RawPayload(bytes: payload), forKey: key, expiresAfter: .seconds(expireAfter))
            } else {
                try kv.set(RawPayload(bytes: payload), forKey: key)
            }
        }
    }
}
