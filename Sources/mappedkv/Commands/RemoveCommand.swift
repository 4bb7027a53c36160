import ArgumentParser
import MappedKV

/// `mappedkv remove`: removes keys.
struct RemoveCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "remove", abstract: "Remove every KEY in one write; absent keys are not an error.")

    @OptionGroup var store: StoreOptions
    @Argument(help: "The keys.") var keys: [String]

    func run() throws {
        let kv = try reportingErrors { try store.open(readOnly: false) }
        defer { kv.close() }
        try reportingErrors { try kv.removeValues(forKeys: keys) }
    }
}
