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
    @Argument(help: "The key.") var key: String
    @Argument(help: "The value.") var value: String

    func run() throws {
        let kv = try reportingErrors { try store.open(readOnly: false) }
        defer { kv.close() }
        let stored = try reportingErrors { try type.set(value, forKey: key, in: kv) }
        guard stored else {
            printError("'\(value)' is not a valid \(type.rawValue)")
            throw ExitCode.failure
        }
    }
}
