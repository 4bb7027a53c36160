import ArgumentParser
import Foundation
import MappedKV

/// `mappedkv rekey`: changes a store's encryption key.
struct RekeyCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "rekey",
        abstract: "Re-encrypt the store under a new key, encrypt a plain store, or decrypt (no new key).",
        discussion: "The current key is given as usual (--crypt-key, --crypt-key-file, --crypt-key-env, --aes256).")

    @OptionGroup var store: StoreOptions

    @Option(name: .long, help: "The new key (visible in the process list: prefer the next two).")
    var newKey: String?
    @Option(name: .long, help: "Read the new key from this file (one trailing newline is ignored).")
    var newKeyFile: String?
    @Option(name: .long, help: "Read the new key from this environment variable.")
    var newKeyEnv: String?
    @Flag(name: .long, help: "The new key is AES-256.")
    var newAes256 = false

    func validate() throws {
        if [newKey, newKeyFile, newKeyEnv].compactMap({ $0 }).count > 1 {
            throw ValidationError("give the new key once: --new-key, --new-key-file or --new-key-env")
        }
    }

    func run() throws {
        let key = try KeySource(
            literal: newKey, file: newKeyFile, environment: newKeyEnv, aes256: newAes256, option: "--new-key"
        ).resolve()
        let kv = try reportingErrors { try store.open(readOnly: false) }
        defer { kv.close() }
        try reportingErrors { try kv.rekey(to: key) }
    }
}
