import ArgumentParser
import MappedKV
import MappedKVFormat

/// `mappedkv get`: prints one value.
struct GetCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "get", abstract: "Print the value of KEY read as --type (exit 1 if absent).",
        discussion: """
            The value is read as a string unless --type says otherwise, as `set` writes it. A value \
            that is not exactly one value of that type is refused (exit 2): the files record no types. \
            With --json: {"key": KEY, "type": TYPE, "value": VALUE}, where VALUE is a JSON bool, \
            number, string (hex for bytes and payload) or array of strings (strings). \
            \(ExitStatus.helpText)
            """)

    @OptionGroup var store: StoreOptions
    @Option(name: .long, help: "How to read the value: \(ValueType.names).")
    var type: ValueType = .string
    @Flag(name: .long, help: "Print the value as a JSON object.")
    var json = false
    @Argument(help: "The key.") var key: String

    func run() throws {
        let kv = try reportingErrors { try store.open(readOnly: true) }
        defer { kv.close() }
        guard let payload = try reportingErrors({ try kv.payload(forKey: key) }) else {
            throw fail(.keyNotFound, "no value for key '\(key)'")
        }
        do {
            if json {
                try JSONOutput.print([
                    "key": key, "type": type.rawValue, "value": try type.jsonValue(fromPayload: payload),
                ])
            } else {
                print(try type.text(fromPayload: payload))
            }
        } catch let error as FormatError {
            throw fail(
                .failure,
                "the value of '\(key)' is not a valid \(type.rawValue) (\(error)): read it with the --type it was written as"
            )
        }
    }
}
