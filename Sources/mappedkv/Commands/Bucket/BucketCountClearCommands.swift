import ArgumentParser
import MappedKVCollections

// `mappedkv bucket count` and `mappedkv bucket clear`: a bucket's size, read from its count record,
// and the removal of all its entries in one write (its index definitions stay).

/// `mappedkv bucket count`.
struct BucketCountCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "count", abstract: "Print the number of entries in BUCKET.")

    @OptionGroup var store: StoreOptions
    @Argument(help: "The bucket.") var bucket: String

    func run() throws {
        let collections = try store.openCollections(readOnly: true)
        defer { collections.close() }
        let count = try reportingCollectionErrors {
            try collections.bucket(bucket, serializer: RawEntrySerializer()).count
        }
        print(count)
    }
}

/// `mappedkv bucket clear`.
struct BucketClearCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "clear",
        abstract: "Remove every entry of BUCKET in one write; its indexes stay. Prints how many went.")

    @OptionGroup var store: StoreOptions
    @Argument(help: "The bucket.") var bucket: String

    func run() throws {
        let collections = try store.openCollections(readOnly: false)
        defer { collections.close() }
        let removed = try reportingCollectionErrors {
            try collections.bucket(bucket, serializer: RawEntrySerializer()).removeAll()
        }
        print("removed \(removed) entries")
    }
}
