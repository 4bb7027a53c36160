import ArgumentParser
import Foundation
import MappedKVCollections

/// `mappedkv bucket`: the collection store's subcommands.
struct BucketCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bucket",
        abstract: "Put, get, list, index and query the buckets of a collection store (MappedKVCollections).",
        discussion: """
            Values are JSON, on the command line and in output. An entry prints as one line: \
            {"bucket":..,"key":..,"value":..,"meta":{..},"created":..,"modified":..}, times in ISO 8601. \
            Metadata given as --meta NAME=VALUE is an integer, a double (with a fraction or exponent), an \
            ISO 8601 date, or else a string; --meta-bytes NAME=BASE64 gives bytes, printed as \
            {"base64":..}. Every subcommand takes the store options. \(ExitStatus.helpText)
            """,
        subcommands: [
            BucketPutCommand.self, BucketGetCommand.self, BucketRemoveCommand.self, BucketListCommand.self,
            BucketIndexCommand.self, BucketQueryCommand.self, BucketImportCommand.self, BucketExportCommand.self,
            BucketCountCommand.self, BucketClearCommand.self, BucketWatchCommand.self,
        ]
    )
}

/// `mappedkv bucket put`.
struct BucketPutCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "put", abstract: "Store the JSON value under KEY in BUCKET, with metadata.")

    @OptionGroup var store: StoreOptions
    @Flag(name: .long, help: "Create the store if it does not exist.") var create = false
    @Option(name: .long, help: "A metadata item NAME=VALUE (repeatable).") var meta: [String] = []
    @Option(name: .long, help: "A bytes metadata item NAME=BASE64 (repeatable).") var metaBytes: [String] = []
    @Argument(help: "The bucket.") var bucket: String
    @Argument(help: "The key.") var key: String
    @Argument(help: "The value, as JSON.") var json: String

    func validate() throws {
        if BucketJSON.normalized(json) == nil { throw ValidationError("the value is not JSON: \(json)") }
        for item in meta where !item.contains("=") { throw ValidationError("--meta takes NAME=VALUE, not \(item)") }
        for item in metaBytes where Self.bytesItem(item) == nil {
            throw ValidationError("--meta-bytes takes NAME=BASE64, not \(item)")
        }
    }

    /// The (name, bytes) of a `--meta-bytes` item, or nil if it is not NAME=BASE64.
    static func bytesItem(_ item: String) -> (name: String, bytes: [UInt8])? {
        let parts = item.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
        guard parts.count == 2, let data = Data(base64Encoded: String(parts[1])) else { return nil }
        return (String(parts[0]), [UInt8](data))
    }

    func run() throws {
        guard let bytes = BucketJSON.normalized(json) else { throw ExitStatus.failure.exitCode }
        var metadata: [String: MetadataValue] = [:]
        for item in meta {
            let parts = item.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            metadata[String(parts[0])] = BucketJSON.metadata(text: String(parts[1]))
        }
        for item in metaBytes {
            guard let (name, bytes) = Self.bytesItem(item) else { throw ExitStatus.failure.exitCode }
            metadata[name] = .bytes(bytes)
        }
        let collections = try store.openCollections(readOnly: false, create: create)
        defer { collections.close() }
        try reportingCollectionErrors {
            try collections.bucket(bucket, serializer: RawEntrySerializer()).put(bytes, forKey: key, metadata: metadata)
        }
    }
}

/// `mappedkv bucket get`.
struct BucketGetCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "get", abstract: "Print the entry of KEY in BUCKET as one JSON line (exit 1 if absent).")

    @OptionGroup var store: StoreOptions
    @Argument(help: "The bucket.") var bucket: String
    @Argument(help: "The key.") var key: String

    func run() throws {
        let collections = try store.openCollections(readOnly: true)
        defer { collections.close() }
        let entry = try reportingCollectionErrors {
            try collections.bucket(bucket, serializer: RawEntrySerializer()).entry(forKey: key)
        }
        guard let entry else { throw fail(.keyNotFound, "no entry '\(key)' in bucket '\(bucket)'") }
        print(BucketJSON.line(entry))
    }
}

/// `mappedkv bucket rm`.
struct BucketRemoveCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "rm", abstract: "Remove KEY from BUCKET (exit 1 if it was not there).")

    @OptionGroup var store: StoreOptions
    @Argument(help: "The bucket.") var bucket: String
    @Argument(help: "The key.") var key: String

    func run() throws {
        let collections = try store.openCollections(readOnly: false)
        defer { collections.close() }
        let removed = try reportingCollectionErrors {
            try collections.bucket(bucket, serializer: RawEntrySerializer()).remove(key)
        }
        if !removed { throw fail(.keyNotFound, "no entry '\(key)' in bucket '\(bucket)'") }
    }
}

/// `mappedkv bucket ls`.
struct BucketListCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "ls", abstract: "Print the keys of BUCKET, one a line, sorted by key bytes.")

    @OptionGroup var store: StoreOptions
    @Argument(help: "The bucket.") var bucket: String

    func run() throws {
        let collections = try store.openCollections(readOnly: true)
        defer { collections.close() }
        let keys = try reportingCollectionErrors {
            try collections.bucket(bucket, serializer: RawEntrySerializer()).keys()
        }
        for key in keys { print(key) }
    }
}
