import ArgumentParser
import MappedKV

/// `mappedkv keys`: lists the keys.
struct KeysCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "keys", abstract: "Print every key, one a line, sorted by key bytes.",
        discussion: "With --json: one JSON array of the keys, in the same order. \(ExitStatus.helpText)")

    @OptionGroup var store: StoreOptions
    @Flag(name: .long, help: "Print the keys as a JSON array.")
    var json = false

    func run() throws {
        let kv = try reportingErrors { try store.open(readOnly: true) }
        defer { kv.close() }
        let keys = try reportingErrors { try kv.allKeys }
        if json {
            try JSONOutput.print(keys)
        } else {
            for key in keys { print(key) }
        }
    }
}
