import ArgumentParser
import MappedKV

/// `mappedkv apply`: runs a script of operations from standard input.
struct ApplyCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "apply",
        abstract: "Apply operations read from standard input, one per line.",
        discussion: """
            Operations: set-int32|set-uint32|set-int64|set-uint64|set-bool|set-double|set-float|set-string KEY VALUE, \
            set-bytes KEY HEX, remove KEY, clear, trim, rekey [NEWKEY] (no NEWKEY: decrypt; the new key is AES-256 with --aes256), incr-int64 KEY DELTA. \
            A string value is the rest of the line after 'KEY '. The first bad line stops the run with its \
            line number and exit status 2; the lines before it stay applied. Runs of consecutive set and remove \
            lines (up to 1,000) are written as one batch: other processes see each run whole or not at all. A store that does not exist \
            is created only with --create. \(ExitStatus.helpText)
            """)

    @OptionGroup var store: StoreOptions
    @Flag(name: .long, help: "Create the store if it does not exist.")
    var create = false

    func run() throws {
        let kv = try reportingErrors(suggestingCreate: true) { try store.open(readOnly: false, create: create) }
        defer { kv.close() }
        var number = 0
        var batcher = ScriptBatcher()
        do {
            while let line = readLine(strippingNewline: true) {
                number += 1
                do {
                    guard let operation = try ScriptParser.parse(line[...], number: number) else { continue }
                    if try batcher.add(operation, line: number, to: kv, aes256: store.aes256) { continue }
                    try batcher.flush(to: kv, aes256: store.aes256)
                    try operation.apply(to: kv, aes256: store.aes256)
                } catch let error as ScriptError {
                    try batcher.flush(to: kv, aes256: store.aes256)
                    throw error
                } catch let error as ScriptBatcher.LineFailure {
                    throw error
                } catch {
                    throw ScriptBatcher.LineFailure(line: number, error: error)
                }
            }
            try batcher.flush(to: kv, aes256: store.aes256)
        } catch let error as ScriptError {
            throw fail(.failure, error.description)
        } catch let failure as ScriptBatcher.LineFailure {
            if let error = failure.error as? MappedKVError {
                throw fail(ExitStatus(error), "line \(failure.line): \(error)")
            }
            throw fail(.failure, "line \(failure.line): \(failure.error)")
        }
    }
}
