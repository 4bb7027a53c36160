// The commands that act on a store's files as a whole, without opening it: back up, restore,
// remove and list. Each is one library call (MappedKV+Storage.swift, MappedKV+Backup.swift), so
// the locking that makes them safe beside running processes is the library's: it takes the locks
// the store's processes use, whichever they are, so `--multi-process` and `--lock` are accepted
// (one set of options fits every command of a script) and noted as having no effect.

import ArgumentParser
import MappedKV

/// The store a storage command acts on: one ID, or with `--all` every store of the root.
struct StoreSelection: ParsableArguments {
    @Option(name: .long, help: "The directory that holds the stores' files.")
    var root: String

    @Option(name: .long, help: "The store's ID (omit with --all).")
    var id: String?

    @Flag(name: .long, help: "Every store of --root.")
    var all = false

    @OptionGroup var access: StoreAccessOptions

    func validate() throws {
        guard all != (id != nil) else { throw ValidationError("give either --id ID or --all") }
    }
}

/// `mappedkv backup`: copies stores, consistently, beside running writers.
struct BackupCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "backup",
        abstract: "Copy a store (or every store of --root) into a directory, under the store's lock.")

    @OptionGroup var selection: StoreSelection
    @Option(name: .long, help: "The directory the copies go to (created if needed).")
    var to: String

    func run() throws {
        let lockReason = "it copies the files under the store's own lock, whichever its processes use"
        selection.access.noteUnused(
            [
                (.multiProcess, lockReason), (.lock, lockReason),
                (.key, "it copies the files as they are, encrypted or not"), (.verbose, "it logs nothing"),
                (.noIndexFile, "a backup never holds the index file, which is derived"),
            ], command: "backup")
        try reportingErrors {
            if let id = selection.id {
                try MappedKV.backupStore(id: id, directory: selection.root, to: to)
                print("backed up 1 store")
            } else {
                print("backed up \(try MappedKV.backupAllStores(directory: selection.root, to: to)) stores")
            }
        }
    }
}

/// `mappedkv restore`: puts backed-up stores back; processes that have them open reload.
struct RestoreCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "restore",
        abstract: "Restore a store (or every store) of --root from a backup directory.",
        discussion: """
            A copy is checked first (its CRC, and with a key that it decodes with it); a damaged copy is \
            refused and the live store is left as it was. Processes that have the store open reload it.
            """)

    @OptionGroup var selection: StoreSelection
    @Option(name: .long, help: "The directory the copies are in.")
    var from: String

    func run() throws {
        let lockReason = "it replaces the files under the store's own lock, whichever its processes use"
        selection.access.noteUnused(
            [
                (.multiProcess, lockReason), (.lock, lockReason), (.verbose, "it logs nothing"),
                (.noIndexFile, "a restore moves the sequence on, which retires any index file"),
            ], command: "restore")
        let cryptKey = try selection.access.resolvedKey()
        try reportingErrors {
            if let id = selection.id {
                try MappedKV.restoreStore(id: id, directory: selection.root, from: from, cryptKey: cryptKey)
                print("restored 1 store")
            } else {
                let count = try MappedKV.restoreAllStores(directory: selection.root, from: from) { _ in cryptKey }
                print("restored \(count) stores")
            }
        }
    }
}

/// `mappedkv rm-store`: deletes a store's files safely while others may have it open.
struct RemoveStoreCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "rm-store",
        abstract: "Delete a store's files; processes that have it open see an empty store.",
        discussion: "Exits 3 when there is no such store.")

    @Option(name: .long, help: "The directory that holds the store's files.")
    var root: String
    @Option(name: .long, help: "The store's ID.")
    var id: String
    @OptionGroup var access: StoreAccessOptions

    func run() throws {
        let lockReason = "it removes the files under the store's own lock, whichever its processes use"
        access.noteUnused(
            [
                (.multiProcess, lockReason), (.lock, lockReason), (.key, "it removes the files without reading them"),
                (.noIndexFile, "it removes the index file with the store"),
            ],
            command: "rm-store")
        let removed = try reportingErrors {
            try MappedKV.removeStore(id: id, directory: root, logger: access.logger)
        }
        guard removed else {
            throw fail(.storeNotFound, "no store '\(id)' in \(root)")
        }
        print("removed \(id)")
    }
}

/// `mappedkv ls`: the stores of a root directory, without opening them.
struct ListStoresCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "ls",
        abstract: "List the stores of a directory: ID<TAB>data bytes<TAB>meta bytes, sorted.",
        discussion: "A store whose ID was hashed into its file name is listed by that file name.")

    @Option(name: .long, help: "The directory that holds the stores' files.")
    var root: String

    func run() throws {
        let stores = try reportingErrors { try MappedKV.stores(in: root) }
        for store in stores.sorted(by: { $0.fileName < $1.fileName }) {
            print("\(store.id ?? store.fileName)\t\(store.dataFileSize)\t\(store.metaFileSize)")
        }
    }
}
