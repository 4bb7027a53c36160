import ArgumentParser
import Foundation
import MappedKVCollections

// `mappedkv collections-child` (hidden): a long-lived process that applies bucket operations read
// from standard input, one a line, and answers each with one line on standard output, flushed
// before the next line is read. Process tests drive it to interleave its writes with another
// process's on one store, each process keeping its indexes in memory, and kill it mid-write. An
// answer is written only after the operation returned, so an answered write is in the store.

/// `mappedkv collections-child`: applies bucket operations from standard input (for tests).
struct CollectionsChildCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "collections-child",
        abstract: "Apply bucket operations from standard input, one tab-separated line each (for process tests).",
        discussion: """
            Lines: put BUCKET KEY JSON; rm BUCKET KEY; clear BUCKET; index-add BUCKET NAME TYPE PATH [unique]; \
            index-rm BUCKET NAME; count BUCKET; count-where BUCKET INDEX MIN; keys BUCKET LIMIT [AFTER]. \
            Each is answered with one line: ok, conflict, removed, absent, removed N, unknown, a number, the \
            keys separated by tabs, or error: REASON.
            """,
        shouldDisplay: false)

    @OptionGroup var store: StoreOptions
    @Flag(name: .long, help: "Create the store if it does not exist.") var create = false

    func run() throws {
        let collections = try store.openCollections(readOnly: false, create: create)
        defer { collections.close() }
        // Written unbuffered, so that each answer reaches the reader before the next line is read.
        FileHandle.standardOutput.write(Data("ready\n".utf8))
        while let line = readLine(strippingNewline: true) {
            let fields = line.split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
            FileHandle.standardOutput.write(Data((Self.answer(fields, collections) + "\n").utf8))
        }
    }

    /// The answer to one operation.
    static func answer(_ fields: [String], _ collections: CollectionStore) -> String {
        guard fields.count >= 2 else { return "error: a line is an operation and a bucket" }
        let bucket = collections.bucket(fields[1], serializer: RawEntrySerializer())
        do {
            switch (fields[0], fields.count) {
            case ("put", 4):
                guard let bytes = BucketJSON.normalized(fields[3]) else { return "error: not JSON" }
                try bucket.put(bytes, forKey: fields[2])
                return "ok"
            case ("rm", 3):
                return try bucket.remove(fields[2]) ? "removed" : "absent"
            case ("clear", 2):
                return "removed \(try bucket.removeAll())"
            case ("index-add", 5), ("index-add", 6):
                guard let type = IndexType(rawValue: fields[3]), let source = IndexSource(fields[4]) else {
                    return "error: bad index type or path"
                }
                try bucket.addIndex(fields[2], type: type, source: source, unique: fields.count == 6)
                return "ok"
            case ("index-rm", 3):
                try bucket.removeIndex(fields[2])
                return "ok"
            case ("count", 2):
                return "\(try bucket.count)"
            case ("count-where", 4):
                guard let minimum = Int64(fields[3]) else { return "error: MIN is not an integer" }
                return "\(try bucket.count(where: [.greaterOrEqual(fields[2], .int(minimum))]))"
            case ("keys", 3), ("keys", 4):
                guard let limit = Int(fields[2]) else { return "error: LIMIT is not an integer" }
                return try bucket.keys(after: fields.count == 4 ? fields[3] : nil, limit: limit).joined(separator: "\t")
            default:
                return "error: unknown operation \(fields[0]) with \(fields.count - 1) arguments"
            }
        } catch CollectionError.uniqueConflict {
            return "conflict"
        } catch CollectionError.unknownIndex {
            return "unknown"
        } catch {
            return "error: \(error)"
        }
    }
}
