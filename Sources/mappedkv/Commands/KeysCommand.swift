import ArgumentParser
import MappedKV

/// `mappedkv keys`: lists the keys.
struct KeysCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "keys", abstract: "Print every key, one a line, sorted by key bytes.")

    @OptionGroup var store: StoreOptions

    func run() throws {
        let kv = try reportingErrors { try store.open(readOnly: true) }
        defer { kv.close() }
        for key in try reportingErrors({ try kv.allKeys }) { print(key) }
    }
}
