import ArgumentParser
import MappedKV

/// `mappedkv increment`: adds to a counter, atomically across processes.
struct IncrementCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "increment",
        abstract: "Add to the Int64 counter under KEY, atomically across processes, and print its new value.",
        discussion: """
            A key with no live value becomes a counter of the delta; with --window it expires that many \
            seconds after that first increment (key expiry is turned on if it is off). A key that holds \
            something other than an Int64 is an error and is left as it is.
            """)

    @OptionGroup var store: StoreOptions
    @Argument(help: "The counter's key.") var key: String
    @Option(name: .long, help: "What to add (may be negative).") var by: Int64 = 1
    @Option(name: .long, help: "Seconds a counter this command creates lives.") var window: Int?
    @Option(name: .long, help: "Increment this many times, printing the value after the last.") var times = 1

    func validate() throws {
        guard times >= 1 else { throw ValidationError("--times must be at least 1") }
        if let window, window < 1 { throw ValidationError("--window must be at least 1 second") }
    }

    func run() throws {
        let kv = try reportingErrors { try store.open(readOnly: false, create: true) }
        defer { kv.close() }
        let lifetime = window.map { Duration.seconds($0) }
        if lifetime != nil, !kv.isKeyExpiryEnabled {
            try reportingErrors { try kv.enableKeyExpiry() }
        }
        var value: Int64 = 0
        for _ in 0..<times {
            value = try reportingErrors { try kv.increment(key, by: by, expiresAfter: lifetime) }
        }
        print(value)
    }
}
