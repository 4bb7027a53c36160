import ArgumentParser
import Foundation
import MappedKV

/// `mappedkv hold`: keeps a store open (optionally under its exclusive lock) until standard input closes.
struct HoldCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "hold",
        abstract: "Open a store and keep it open until standard input is closed.",
        discussion: """
            Prints "ready" once the store is open (and, with --exclusive, locked). With --exclusive \
            no other process can read or write the store until then: use it to pause writers while \
            copying the files. With --set-on-release KEY VALUE, the string VALUE is stored under KEY \
            just before the lock is released. With --print-keys-on-release, the store's keys are \
            printed (comma-separated, after "keys: ") once standard input closes, before that set.
            """)

    @OptionGroup var store: StoreOptions
    @Flag(name: .long, help: "Hold the store's exclusive inter-process lock (needs --multi-process).")
    var exclusive = false
    @Option(name: .long, parsing: .upToNextOption, help: "KEY VALUE to set just before releasing.")
    var setOnRelease: [String] = []
    @Flag(name: .long, help: "Open read-only.")
    var readOnly = false
    @Flag(name: .long, help: "Create the store if it does not exist.")
    var create = false
    @Flag(name: .long, help: "Print the store's keys once standard input closes.")
    var printKeysOnRelease = false

    func validate() throws {
        if exclusive && !store.multiProcess { throw ValidationError("--exclusive needs --multi-process") }
        if !setOnRelease.isEmpty && setOnRelease.count != 2 {
            throw ValidationError("--set-on-release takes KEY VALUE")
        }
    }

    func run() throws {
        let kv = try reportingErrors(suggestingCreate: !readOnly) {
            try store.open(readOnly: readOnly, create: create)
        }
        defer { kv.close() }
        let release = setOnRelease
        let printsKeys = printKeysOnRelease
        let printKeys = { (keys: [String]) in
            if printsKeys { FileHandle.standardOutput.write(Data("keys: \(keys.joined(separator: ","))\n".utf8)) }
        }
        let wait = {
            FileHandle.standardOutput.write(Data("ready\n".utf8))
            _ = FileHandle.standardInput.readDataToEndOfFile()
        }
        try reportingErrors {
            if exclusive {
                try kv.withExclusiveLock { transaction in
                    wait()
                    printKeys(try transaction.allKeys)
                    if release.count == 2 { try transaction.set(release[1], forKey: release[0]) }
                }
            } else {
                wait()
                printKeys(try kv.allKeys)
                if release.count == 2 { try kv.set(release[1], forKey: release[0]) }
            }
        }
    }
}
