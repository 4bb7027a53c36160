import ArgumentParser
import Foundation
import MappedKV

/// The options that name a store and say how to open it, shared by every subcommand that opens
/// one: `--root`, `--id` and the ``StoreAccessOptions`` (key, sharing mode, lock, logging).
struct StoreOptions: ParsableArguments {
    @Option(name: .long, help: "The directory that holds the store's files.")
    var root: String

    @Option(name: .long, help: "The store's ID: its files are <root>/<id> and <root>/<id>.crc.")
    var id: String

    @OptionGroup var access: StoreAccessOptions

    /// The key options.
    var key: KeyOptions { access.key }
    /// Whether the store is opened in multi-process mode.
    var multiProcess: Bool { access.multiProcess }
    /// The inter-process lock of a multi-process open.
    var lock: ProcessLock { access.lock }
    /// Whether the key options ask for AES-256.
    var aes256: Bool { access.aes256 }

    /// The key from whichever option gave it, or nil for a plain store.
    func resolvedKey() throws -> CryptKey? { try access.resolvedKey() }

    /// Opens the store, read-only or read-write. A store that does not exist is created only
    /// with `create`: otherwise it fails with ``MappedKVError/storeNotFound(path:)`` (exit 3).
    /// Damage fails the open unless `recoveryHandler` decides otherwise: only `mappedkv repair`
    /// changes a damaged store, and only it may say that a store without a key is plain
    /// (`treatsStoreAsPlain`, ``Configuration/treatsStoreAsPlain``).
    func open(
        readOnly: Bool, create: Bool = false, treatsStoreAsPlain: Bool = false,
        recoveryHandler: @escaping RecoveryHandler = { _ in .fail }
    ) throws -> MappedKV {
        access.noteLockWithoutMultiProcess()
        return try MappedKV(
            id: id, directory: root,
            configuration: Configuration(
                isReadOnly: readOnly, isMultiProcess: multiProcess, cryptKey: try resolvedKey(),
                recoveryHandler: recoveryHandler, createsIfMissing: create, processLock: lock,
                usesIndexFile: !access.noIndexFile, treatsStoreAsPlain: treatsStoreAsPlain),
            logger: access.logger)
    }

    /// For the commands that read the files without opening or locking the store (`info`,
    /// `verify`): notes the options that only an open uses.
    func noteUnusedByInspection(command: String) {
        let reason = "it reads the files without opening or locking the store"
        access.noteUnused(
            [(.multiProcess, reason), (.lock, reason), (.verbose, reason), (.noIndexFile, reason)], command: command)
    }
}

/// Where a key comes from: a literal, a file or an environment variable (at most one).
struct KeySource {
    var literal: String?
    var file: String?
    var environment: String?
    var aes256: Bool
    /// The option's base name, for messages.
    var option: String

    /// The prepared key, or nil if no source was given.
    func resolve() throws -> CryptKey? {
        var raw: [UInt8]?
        if let literal { raw = Array(literal.utf8) }
        if let file {
            guard let data = FileManager.default.contents(atPath: file) else {
                throw ValidationError("\(option)-file: cannot read \(file)")
            }
            var bytes = [UInt8](data)
            if bytes.last == UInt8(ascii: "\n") { bytes.removeLast() }
            if bytes.last == UInt8(ascii: "\r") { bytes.removeLast() }
            raw = bytes
        }
        if let environment {
            guard let value = ProcessInfo.processInfo.environment[environment] else {
                throw ValidationError("\(option)-env: the variable \(environment) is not set")
            }
            raw = Array(value.utf8)
        }
        guard let raw else { return nil }
        guard let key = CryptKey(raw, aes256: aes256) else { throw ValidationError("\(option): the key is empty") }
        return key
    }
}
