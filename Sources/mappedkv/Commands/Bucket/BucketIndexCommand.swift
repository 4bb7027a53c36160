import ArgumentParser
import MappedKVCollections

/// `mappedkv bucket index`: add, list and remove stored indexes.
struct BucketIndexCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "index", abstract: "Add, list or remove the indexes of buckets.",
        subcommands: [BucketIndexAddCommand.self, BucketIndexListCommand.self, BucketIndexRemoveCommand.self])
}

/// `mappedkv bucket index add`.
struct BucketIndexAddCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "add",
        abstract: "Add index NAME of TYPE over PATH (value.a.b, meta.NAME, created or modified) to BUCKET.",
        discussion: "A unique index over entries that already share a value is refused (exit 2).")

    @OptionGroup var store: StoreOptions
    @Flag(name: .long, help: "Create the store if it does not exist.") var create = false
    @Flag(name: .long, help: "No two entries may have the same value.") var unique = false
    @Argument(help: "The bucket.") var bucket: String
    @Argument(help: "The index's name.") var name: String
    @Argument(help: "int, double, string or date.") var type: String
    @Argument(help: "value.a.b, meta.NAME, created or modified.") var path: String

    func validate() throws {
        if IndexType(rawValue: type) == nil {
            throw ValidationError("TYPE is int, double, string or date, not \(type)")
        }
        if IndexSource(path) == nil {
            throw ValidationError("PATH is value.a.b, meta.NAME, created or modified, not \(path)")
        }
    }

    func run() throws {
        guard let type = IndexType(rawValue: type), let source = IndexSource(path) else {
            throw ExitStatus.failure.exitCode
        }
        let collections = try store.openCollections(readOnly: false, create: create)
        defer { collections.close() }
        try reportingCollectionErrors {
            try collections.bucket(bucket, serializer: RawEntrySerializer()).addIndex(
                name, type: type, source: source, unique: unique)
        }
    }
}

/// `mappedkv bucket index ls`.
struct BucketIndexListCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "ls", abstract: "Print BUCKET<TAB>NAME<TAB>TYPE<TAB>PATH[<TAB>unique] for every index.")

    @OptionGroup var store: StoreOptions
    @Argument(help: "Only this bucket's indexes.") var bucket: String?

    func run() throws {
        let collections = try store.openCollections(readOnly: true)
        defer { collections.close() }
        try reportingCollectionErrors {
            let buckets = try bucket.map { [$0] } ?? collections.indexedBucketNames()
            for name in buckets {
                for definition in try collections.bucket(name, serializer: RawEntrySerializer()).indexDefinitions() {
                    print(
                        [name, definition.name, definition.type.rawValue, definition.source.description]
                            .joined(separator: "\t") + (definition.isUnique ? "\tunique" : ""))
                }
            }
        }
    }
}

/// `mappedkv bucket index rm`.
struct BucketIndexRemoveCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "rm",
        abstract: "Remove index NAME of BUCKET: no process maintains it afterwards; the entries stay.",
        discussion: "A bucket without such an index is an error (exit 2).")

    @OptionGroup var store: StoreOptions
    @Argument(help: "The bucket.") var bucket: String
    @Argument(help: "The index's name.") var name: String

    func run() throws {
        let collections = try store.openCollections(readOnly: false)
        defer { collections.close() }
        try reportingCollectionErrors {
            try collections.bucket(bucket, serializer: RawEntrySerializer()).removeIndex(name)
        }
    }
}
