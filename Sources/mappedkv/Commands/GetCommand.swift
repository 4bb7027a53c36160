import ArgumentParser
import MappedKV

/// `mappedkv get`: prints one value.
struct GetCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "get", abstract: "Print the value of KEY read as --type (exit 1 if absent).")

    @OptionGroup var store: StoreOptions
    @Option(name: .long, help: "How to read the value: \(ValueType.allCases.map(\.rawValue).joined(separator: ", ")).")
    var type: ValueType = .payload
    @Argument(help: "The key.") var key: String

    func run() throws {
        let kv = try reportingErrors { try store.open(readOnly: true) }
        defer { kv.close() }
        guard let text = try reportingErrors({ try type.get(forKey: key, in: kv) }) else {
            printError("no value for key '\(key)'")
            throw ExitCode.failure
        }
        print(text)
    }
}
