import ArgumentParser
import Foundation
import MappedKV

/// The exit statuses every command uses, so that a script can tell failures apart
/// (documented in `mappedkv --help` and docs/CLI.md). Usage errors keep argument-parser's own
/// status (64).
enum ExitStatus: Int32, CaseIterable {
    /// Success.
    case ok = 0
    /// The key has no value (`get`).
    case keyNotFound = 1
    /// Any other failure: an invalid value, a value of another type, a file system error.
    case failure = 2
    /// The store does not exist (and `--create` was not given where it applies).
    case storeNotFound = 3
    /// The store is damaged (`verify` and `info` also exit with it for a store they find damaged).
    case damaged = 4
    /// The key does not decrypt the store (or one was given for a plain store).
    case wrongKey = 5
    /// The store is held in a mode this open cannot join, or is in use by an operation that
    /// needs it alone.
    case locked = 6
    /// No key was given for a store that looks encrypted: its meta file holds an IV and its
    /// records do not load as plain text (`repair --plain` is for a plain store with a stale IV).
    case missingKey = 7

    /// The status as the error argument-parser exits with.
    var exitCode: ExitCode { ExitCode(rawValue) }

    /// The status for a store error.
    init(_ error: MappedKVError) {
        switch error {
        case .storeNotFound: self = .storeNotFound
        case .corrupted: self = .damaged
        case .wrongCryptKey: self = .wrongKey
        case .missingCryptKey: self = .missingKey
        case .modeConflict, .storeInUse: self = .locked
        default: self = .failure
        }
    }

    /// The lines of `--help` that list the statuses.
    static let helpText = """
        Exit status: 0 ok; 1 key not found; 2 other failure (bad value, wrong type, I/O); \
        3 store not found; 4 store damaged; 5 wrong key; 6 locked or held in another mode (another \
        process has it open in single-process mode); 7 no key given for a store that looks encrypted; \
        64 usage error.
        """
}

/// Prints `message` to standard error.
func printError(_ message: String) {
    FileHandle.standardError.write(Data(("mappedkv: " + message + "\n").utf8))
}

/// Runs `body`, turning a store error into a one-line message on standard error and its exit
/// status (``ExitStatus``). With `suggestingCreate`, a missing store's message says to pass
/// `--create`.
@discardableResult
func reportingErrors<T>(suggestingCreate: Bool = false, _ body: () throws -> T) throws -> T {
    do {
        return try body()
    } catch let error as MappedKVError {
        switch error {
        case .storeNotFound(let path) where suggestingCreate:
            printError("no store at \(path): check --root and --id, or pass --create to create it")
        case .storeNotFound(let path):
            printError("no store at \(path): check --root and --id")
        default:
            printError(error.description)
        }
        throw ExitStatus(error).exitCode
    }
}

/// Fails with `status` after printing `message` to standard error.
func fail(_ status: ExitStatus, _ message: String) -> ExitCode {
    printError(message)
    return status.exitCode
}
