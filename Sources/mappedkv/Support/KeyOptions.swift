import ArgumentParser
import MappedKV

/// The encryption-key options every command that opens a store or a cache takes: the key given
/// once, literally, from a file or from an environment variable, and AES-256 on request.
struct KeyOptions: ParsableArguments {
    @Option(name: .long, help: "The encryption key (visible in the process list: prefer the next two).")
    var cryptKey: String?

    @Option(name: .long, help: "Read the encryption key from this file (one trailing newline is ignored).")
    var cryptKeyFile: String?

    @Option(name: .long, help: "Read the encryption key from this environment variable.")
    var cryptKeyEnv: String?

    @Flag(name: .long, help: "Use AES-256 (the key is zero-padded or cut to 32 bytes) instead of AES-128.")
    var aes256 = false

    func validate() throws {
        let sources = [cryptKey, cryptKeyFile, cryptKeyEnv].compactMap { $0 }
        if sources.count > 1 {
            throw ValidationError("give the key once: --crypt-key, --crypt-key-file or --crypt-key-env")
        }
        if aes256 && sources.isEmpty {
            throw ValidationError("--aes256 needs a key")
        }
    }

    /// The key from whichever option gave it, or nil for none.
    func resolvedKey() throws -> CryptKey? {
        try KeySource(
            literal: cryptKey, file: cryptKeyFile, environment: cryptKeyEnv, aes256: aes256, option: "--crypt-key"
        ).resolve()
    }
}
