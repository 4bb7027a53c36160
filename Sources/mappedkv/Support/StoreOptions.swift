import ArgumentParser
import Foundation
import Logging
import MappedKV

/// The options that name a store, shared by every subcommand that opens one.
struct StoreOptions: ParsableArguments {
    @Option(name: .long, help: "The directory that holds the store's files.")
    var root: String

    @Option(name: .long, help: "The store's ID: its files are <root>/<id> and <root>/<id>.crc.")
    var id: String

    @Option(name: .long, help: "Encryption key (not supported yet).")
    var cryptKey: String?

    @Flag(name: .long, help: "Share the store with other processes (not supported yet).")
    var multiProcess = false

    @Flag(name: .long, help: "Log the store's debug messages to standard error.")
    var verbose = false

    func validate() throws {
        if cryptKey != nil {
            throw ValidationError("--crypt-key: encrypted stores are not supported by this version yet")
        }
        if multiProcess {
            throw ValidationError("--multi-process: multi-process mode is not supported by this version yet")
        }
    }

    /// Opens the store, read-only or read-write.
    func open(readOnly: Bool) throws -> MappedKV {
        var logger: Logger? = nil
        if verbose {
            var stderrLogger = Logger(label: "mappedkv") { StreamLogHandler.standardError(label: $0) }
            stderrLogger.logLevel = .debug
            logger = stderrLogger
        }
        return try MappedKV(
            id: id, directory: root, configuration: Configuration(isReadOnly: readOnly), logger: logger)
    }
}

/// Prints `message` to standard error.
func printError(_ message: String) {
    FileHandle.standardError.write(Data(("mappedkv: " + message + "\n").utf8))
}

/// Runs `body`, turning a store error into a one-line message on standard error and exit status 1.
func reportingErrors<T>(_ body: () throws -> T) throws -> T {
    do {
        return try body()
    } catch let error as MappedKVError {
        printError(error.description)
        throw ExitCode.failure
    }
}
