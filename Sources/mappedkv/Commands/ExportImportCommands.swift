// `export` and `import`: a store as JSON lines (Support/EntryLine.swift), for copying stores,
// diffing them and loading data from scripts. An export imported into a fresh store gives the
// same `dump`, expiry times included; an import writes all its lines in one batch or none.

import ArgumentParser
import Foundation
import MappedKV

/// `mappedkv export`: prints every entry as a JSON line.
struct ExportCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "export",
        abstract: "Print every key as a JSON line: key, payload hex, expiry, and the text of string values.",
        discussion: """
            One line per key, sorted by key bytes: {"key": K, "payload": HEX}, with "expiresAt" \
            (seconds since 1970, 0 never) when key expiry is on, and "type": "string", "value": TEXT \
            when the payload reads as a string (the files record no types: only strings are \
            inferred). `import` reads the lines back exactly. \(ExitStatus.helpText)
            """)

    @OptionGroup var store: StoreOptions

    func run() throws {
        let kv = try reportingErrors { try store.open(readOnly: true) }
        defer { kv.close() }
        var output = ""
        for entry in try reportingErrors({ try kv.exportedEntries() }) {
            output += try EntryLine.encode(entry) + "\n"
        }
        FileHandle.standardOutput.write(Data(output.utf8))
    }
}

/// `mappedkv import`: stores the entries of JSON lines in one batch.
struct ImportCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "import",
        abstract: "Store the entries of JSON lines from standard input in one batch (all or none).",
        discussion: """
            Reads what `export` writes, or lines with "type" (a --type name of `set`) and "value" \
            instead of "payload": {"key": "n", "type": "int32", "value": 5}. Every line is checked \
            before anything is written; a bad line stops the import with its number and exit status \
            2. Lines with "expiresAt" turn key expiry on if it is off (said on standard error), so \
            that the times are kept. A store that does not exist is created only with --create. \
            \(ExitStatus.helpText)
            """)

    @OptionGroup var store: StoreOptions
    @Flag(name: .long, help: "Create the store if it does not exist.")
    var create = false

    func run() throws {
        var entries: [StoreEntry] = []
        var number = 0
        while let line = readLine(strippingNewline: true) {
            number += 1
            do {
                if let entry = try EntryLine.decode(line[...], number: number) { entries.append(entry) }
            } catch {
                throw fail(.failure, error.description)
            }
        }
        let kv = try reportingErrors(suggestingCreate: true) { try store.open(readOnly: false, create: create) }
        defer { kv.close() }
        try reportingErrors {
            if !kv.isKeyExpiryEnabled && entries.contains(where: { $0.expiresAt != nil }) {
                try kv.enableKeyExpiry()
                printError("turned key expiry on: the input carries expiry times")
            }
            try kv.importEntries(entries)
        }
        print("imported \(entries.count) entries")
    }
}
