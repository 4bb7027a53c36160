import ArgumentParser
import Foundation
import MappedKVCollections

/// `mappedkv bucket query`.
struct BucketQueryCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "query",
        abstract: "Print the entries of BUCKET that meet every --where (of one --or group), one JSON line each.",
        discussion: """
            --where NAME OP VALUE, repeatable, ANDed: OP is =, !=, <, <=, >, >=, prefix (strings) or in \
            (VALUE a comma-separated list); VALUE is read as the index's type (dates in ISO 8601). != leaves \
            out entries with no value for the index, as in SQL. --or between groups of --where ORs them: \
            --where a = 1 --or --where b = 2 --where c > 3 means a = 1 OR (b = 2 AND c > 3); an entry \
            meeting several groups is printed once. \
            --order NAME orders by an index (entries without a value for it are left out; ties by key), \
            otherwise by key. When more results remain after --limit, a last line #cursor<TAB>CURSOR \
            gives the --after of the next page. With --count, one number.
            """)

    @OptionGroup var store: StoreOptions
    @Argument(help: "The bucket.") var bucket: String
    @Option(name: .customLong("where"), parsing: .upToNextOption, help: "NAME OP VALUE (repeatable).")
    var conditions: [String] = []
    @Flag(name: .customLong("or"), help: "Between groups of --where: an entry may meet any group.") var or: Int
    @Option(name: .long, help: "The index to order by.") var order: String?
    @Flag(name: .long, help: "Descending order.") var desc = false
    @Option(name: .long, help: "At most N entries.") var limit: Int?
    @Option(name: .long, help: "Continue after this cursor (from the #cursor line).") var after: String?
    @Flag(name: .long, help: "Print the number of matching entries only.") var count = false

    func validate() throws {
        if conditions.count % 3 != 0 { throw ValidationError("--where takes NAME OP VALUE") }
        if or > 0 { _ = try BucketQueryGroups.split(Array(CommandLine.arguments.dropFirst()), parsed: conditions) }
        if let limit, limit < 0 { throw ValidationError("--limit must not be negative") }
        if let after, QueryCursor(after) == nil { throw ValidationError("--after is not a cursor this tool printed") }
    }

    func run() throws {
        let collections = try store.openCollections(readOnly: true)
        defer { collections.close() }
        let handle = collections.bucket(bucket, serializer: RawEntrySerializer())
        try reportingCollectionErrors {
            let types = Dictionary(
                try handle.indexDefinitions().map { ($0.name, $0.type) }, uniquingKeysWith: { first, _ in first })
            let words =
                or == 0
                ? [conditions]
                : try BucketQueryGroups.split(Array(CommandLine.arguments.dropFirst()), parsed: conditions)
            var groups: [[QueryCondition]] = []
            for group in words {
                var parsed: [QueryCondition] = []
                for start in stride(from: 0, to: group.count, by: 3) {
                    parsed.append(try Self.condition(group[start], group[start + 1], group[start + 2], types))
                }
                groups.append(parsed)
            }
            if count {
                print(try handle.count(anyOf: groups))
                return
            }
            let page = try handle.query(
                Query(
                    anyOf: groups, orderBy: order, descending: desc, limit: limit,
                    after: after.flatMap(QueryCursor.init)))
            var output = ""
            for entry in page.entries { output += BucketJSON.line(entry) + "\n" }
            if let cursor = page.cursor { output += "#cursor\t\(cursor)\n" }
            FileHandle.standardOutput.write(Data(output.utf8))
        }
    }

    /// One condition from its three words.
    static func condition(
        _ name: String, _ op: String, _ text: String, _ types: [String: IndexType]
    ) throws
        -> QueryCondition
    {
        guard let type = types[name] else { throw CollectionError.unknownIndex(bucket: "", name: name) }
        func value(_ text: String) throws -> IndexValue {
            let parsed: IndexValue? =
                switch type {
                case .int: Int64(text).map(IndexValue.int)
                case .double: Double(text).map(IndexValue.double)
                case .string: .string(text)
                case .date: BucketJSON.parseDate(text).map(IndexValue.date)
                }
            guard let parsed else {
                throw ValidationError("'\(text)' is not a valid \(type.rawValue) for index \(name)")
            }
            return parsed
        }
        switch op {
        case "=", "==": return .equal(name, try value(text))
        case "!=": return .notEqual(name, try value(text))
        case "<": return .less(name, try value(text))
        case "<=": return .lessOrEqual(name, try value(text))
        case ">": return .greater(name, try value(text))
        case ">=": return .greaterOrEqual(name, try value(text))
        case "prefix": return .prefix(name, text)
        case "in": return .oneOf(name, try text.split(separator: ",").map { try value(String($0)) })
        default: throw ValidationError("OP is =, !=, <, <=, >, >=, prefix or in, not \(op)")
        }
    }
}

/// `mappedkv bucket import`.
struct BucketImportCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "import",
        abstract: "Store entries from JSON lines on standard input (as `get` prints them), 1,000 lines a batch.",
        discussion: """
            Each batch of up to 1,000 lines is one write: all of it or none. A bad line stops the import \
            with its number (exit 2); the batches before it stay. Created and modified times are kept.
            """)

    @OptionGroup var store: StoreOptions
    @Flag(name: .long, help: "Create the store if it does not exist.") var create = false

    func run() throws {
        let collections = try store.openCollections(readOnly: false, create: create)
        defer { collections.close() }
        var batch: [Entry<[UInt8]>] = []
        var number = 0
        var imported = 0
        func flush() throws {
            let byBucket = Dictionary(grouping: batch, by: \.bucket)
            try reportingCollectionErrors {
                // One bucket per write keeps each bucket's unique checks whole; a batch spanning
                // buckets is one write per bucket.
                for (bucket, entries) in byBucket.sorted(by: { $0.key < $1.key }) {
                    try collections.bucket(bucket, serializer: RawEntrySerializer()).importEntries(entries)
                }
            }
            imported += batch.count
            batch.removeAll(keepingCapacity: true)
        }
        while let line = readLine(strippingNewline: true) {
            number += 1
            if line.allSatisfy(\.isWhitespace) { continue }
            batch.append(try BucketJSON.entry(fromLine: line[...], number: number))
            if batch.count == 1_000 { try flush() }
        }
        try flush()
        print("imported \(imported) entries")
    }
}

/// `mappedkv bucket export`.
struct BucketExportCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "export", abstract: "Print every entry (of BUCKET, or of every bucket) as a JSON line.")

    @OptionGroup var store: StoreOptions
    @Argument(help: "Only this bucket.") var bucket: String?

    func run() throws {
        let collections = try store.openCollections(readOnly: true)
        defer { collections.close() }
        try reportingCollectionErrors {
            for name in try bucket.map({ [$0] }) ?? collections.bucketNames() {
                var output = ""
                for entry in try collections.bucket(name, serializer: RawEntrySerializer(), cacheLimit: 0).entries() {
                    output += BucketJSON.line(entry) + "\n"
                }
                FileHandle.standardOutput.write(Data(output.utf8))
            }
        }
    }
}
