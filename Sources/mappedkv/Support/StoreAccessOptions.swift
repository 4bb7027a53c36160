// How a command opens or locks a store, apart from which store: the key, the sharing mode, the
// inter-process lock and logging. Every command that opens or locks a store takes this one group,
// so one set of options fits every call of a script. The invariant: an option of the group is
// either used by the command or named in a one-line note on standard error saying why it has no
// effect there; it is never refused as unknown and never silently dropped.

import ArgumentParser
import Logging
import MappedKV

/// The options of the shared group, for notes about the ones a command does not use.
enum StoreAccessOption: Equatable {
    case multiProcess, lock, key, verbose, noIndexFile
}

/// The key, the sharing mode, the lock and logging of a store (or a cache's manifest store).
struct StoreAccessOptions: ParsableArguments {
    @OptionGroup var key: KeyOptions

    @Flag(name: .long, help: "Share the store with other processes (MMKV's MULTI_PROCESS mode).")
    var multiProcess = false

    @Option(
        name: .customLong("lock"),
        help: ArgumentHelp(
            "With --multi-process: the inter-process lock, flock (MMKV's, the default for stores) or shared-memory (faster; never share such a store with MMKV processes; the default for cache directories).",
            valueName: "lock"))
    var lockChoice: ProcessLock?

    @Flag(name: .long, help: "Log the store's debug messages to standard error.")
    var verbose = false

    @Flag(
        name: .long,
        help: "Neither read nor write the store's index file (<id>.index); the open decodes the whole log.")
    var noIndexFile = false

    /// The lock a multi-process store takes: the one given, or MMKV's `flock`.
    var lock: ProcessLock { lockChoice ?? .flock }

    /// Whether the key options ask for AES-256.
    var aes256: Bool { key.aes256 }

    /// The key from whichever option gave it, or nil for a plain store.
    func resolvedKey() throws -> CryptKey? { try key.resolvedKey() }

    /// A logger to standard error at debug level with `--verbose`, nil without.
    var logger: Logger? {
        guard verbose else { return nil }
        var stderrLogger = Logger(label: "mappedkv") { StreamLogHandler.standardError(label: $0) }
        stderrLogger.logLevel = .debug
        return stderrLogger
    }

    /// The key options as given, to pass on to a child process (which inherits the environment
    /// and the working directory, so a file or variable names the same key there).
    var keyArguments: [String] {
        var arguments: [String] = []
        if let literal = key.cryptKey { arguments += ["--crypt-key", literal] }
        if let file = key.cryptKeyFile { arguments += ["--crypt-key-file", file] }
        if let variable = key.cryptKeyEnv { arguments += ["--crypt-key-env", variable] }
        return arguments + (aes256 ? ["--aes256"] : [])
    }

    /// How `option` was given on the command line, or nil if it was not.
    func given(_ option: StoreAccessOption) -> String? {
        switch option {
        case .multiProcess: return multiProcess ? "--multi-process" : nil
        case .lock: return lockChoice.map { "--lock \($0.argument)" }
        case .verbose: return verbose ? "--verbose" : nil
        case .noIndexFile: return noIndexFile ? "--no-index-file" : nil
        case .key:
            let source =
                key.cryptKey != nil
                ? "--crypt-key"
                : key.cryptKeyFile != nil ? "--crypt-key-file" : key.cryptKeyEnv != nil ? "--crypt-key-env" : nil
            return source.map { aes256 ? "\($0) --aes256" : $0 }
        }
    }

    /// Prints, for each option of `unused` that was given, one line on standard error saying that
    /// it has no effect on `command` and why (the reason paired with it in `unused`).
    func noteUnused(_ unused: [(StoreAccessOption, String)], command: String) {
        for (option, reason) in unused {
            if let spelling = given(option) { printError("note: \(spelling) has no effect on \(command): \(reason)") }
        }
    }

    /// Notes `--lock` given without `--multi-process`: only a multi-process store takes the
    /// inter-process lock it chooses.
    func noteLockWithoutMultiProcess() {
        if !multiProcess, let spelling = given(.lock) {
            printError("note: \(spelling) has no effect without --multi-process: it chooses a shared store's lock")
        }
    }
}
