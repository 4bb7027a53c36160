import ArgumentParser
import MappedKV

/// `mappedkv expire`: turns MMKV-compatible key expiry on or off.
struct ExpireCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "expire",
        abstract: "Turn key expiry on (--enable) or off (--disable), or show whether it is on.",
        discussion: """
            With expiry on, every value carries a 4-byte expiry time (MMKV's format); 'set --expire-after N' \
            gives one value a lifetime. Turning it on or off rewrites every value, as MMKV does. Times are \
            32-bit seconds since 1970: nothing can expire after 2106-02-07.
            """)

    @OptionGroup var store: StoreOptions
    @Flag(name: .long, help: "Turn key expiry on.") var enable = false
    @Flag(name: .long, help: "Turn key expiry off, removing every value's expiry time.") var disable = false
    @Option(name: .long, help: "With --enable: the lifetime in seconds of values set without one (0: never).")
    var defaultSeconds: UInt32 = 0

    func validate() throws {
        if enable && disable { throw ValidationError("give --enable or --disable, not both") }
        if !enable && defaultSeconds != 0 { throw ValidationError("--default-seconds goes with --enable") }
    }

    func run() throws {
        let kv = try reportingErrors { try store.open(readOnly: !enable && !disable) }
        defer { kv.close() }
        if enable {
            try reportingErrors { try kv.enableKeyExpiry(defaultDuration: .seconds(defaultSeconds)) }
        } else if disable {
            try reportingErrors { try kv.disableKeyExpiry() }
        } else {
            print(kv.isKeyExpiryEnabled ? "on" : "off")
        }
    }
}
