import ArgumentParser
import MappedKV

/// `mappedkv dump`: prints every key with its stored payload, in the `.expect` format of the vectors.
struct DumpCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "dump",
        abstract: "Print KEY<TAB>HEX for every key, sorted by key bytes, then #count<TAB>N.",
        discussion: """
            HEX is the stored value payload. The store is opened read-only. With --json: \
            {"count": N, "entries": [{"key": KEY, "payload": HEX}, ...]}, in the same order. \
            \(ExitStatus.helpText)
            """)

    @OptionGroup var store: StoreOptions
    @Flag(name: .long, help: "Print the entries as one JSON object.")
    var json = false

    func run() throws {
        let kv = try reportingErrors { try store.open(readOnly: true) }
        defer { kv.close() }
        let entries = try reportingErrors { try kv.entries() }
        if json {
            try JSONOutput.print([
                "count": entries.count,
                "entries": entries.map { ["key": $0.key, "payload": Hex.encode($0.payload)] },
            ])
            return
        }
        var output = ""
        for entry in entries {
            output += entry.key + "\t" + Hex.encode(entry.payload) + "\n"
        }
        output += "#count\t\(entries.count)\n"
        print(output, terminator: "")
    }
}
