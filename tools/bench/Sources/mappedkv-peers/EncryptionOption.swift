import Glibc
import MappedKV

/// `--encrypted`: whether the open-scaling bench's MappedKV stores are encrypted (AES-128 under a
/// fixed key), so that it times encrypted stores' opens, memory and gets beside plain ones'.
///
/// The command leaves the choice in the environment before anything opens a store, as
/// ``IndexFileOption`` does, so that its children open their stores the same way.
enum EncryptionOption {
    /// Where the command leaves its choice.
    static let environmentVariable = "MAPPEDKV_BENCH_ENCRYPTED"

    /// Whether the command asked for encrypted stores.
    static let isOn: Bool = getenv(environmentVariable).map { String(cString: $0) == "1" } ?? false

    /// The key the stores are encrypted with (a bench's, not a secret).
    static let keyText = "open-scaling-key"

    /// The key for a configuration, or nil for plain stores.
    static var key: CryptKey? { isOn ? CryptKey(Array(keyText.utf8)) : nil }

    /// The `mappedkv` tool's arguments that open the stores as chosen.
    static var toolArguments: [String] { isOn ? ["--crypt-key", keyText] : [] }
}
