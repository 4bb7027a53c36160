import Logging
import MappedKV
import MappedKVFormat

/// A MappedKV store of buckets: each entry is a (bucket, key) pair with a value, metadata and
/// times, stored as one record, so every store feature (encryption, multi-process sharing, verify
/// and repair) works underneath.
///
/// A collection store is marked as such (docs/FORMAT.md 11): opening a store of plain keys as a
/// collection store is refused, and so is opening a collection store with plain `MappedKV`.
///
/// ```swift
/// import Foundation
/// import MappedKVCollections
///
/// struct Post: Codable, Sendable { var title: String }
///
/// let dir = FileManager.default.temporaryDirectory.appendingPathComponent("collections-\(getpid())").path
/// defer { try? FileManager.default.removeItem(atPath: dir) }
/// let collections = try CollectionStore(id: "feed", directory: dir)
/// let posts = collections.bucket("posts", of: Post.self)
/// try posts.put(Post(title: "Hello"), forKey: "1000", metadata: ["downloaded": .date(Date())])
/// print(try posts.value(forKey: "1000")?.title ?? "-")
/// ```
public final class CollectionStore: Sendable {
    /// The store underneath, opened with ``kind`` as its `Configuration.storeKind`: use it
    /// for store-wide operations (sync, trim, rekey, backup), not for reading entries.
    public let store: MappedKV
    /// This process's indexes of the store, shared by every handle on it.
    let indexes: CollectionIndexes

    /// The marker's value: the format version of the store's keys and records (docs/FORMAT.md
    /// 11.0). Version 2 adds the buckets' count records and bytes metadata; a store of version 1
    /// is upgraded by its first read-write open.
    static let formatVersion = "2"

    /// The version of stores written before count records: upgraded by a read-write open.
    static let versionWithoutCounts = "1"

    /// The versions this release opens.
    static let readableVersions: Set<String> = [versionWithoutCounts, formatVersion]

    /// The kind of a collection store (docs/FORMAT.md 11.0): its marker key is
    /// `U+0001 "mappedkv.collections"`, holding the store's format version. Set it as
    /// `Configuration.storeKind` to open a collection store as a plain `MappedKV`, for its raw keys.
    public static let kind = StoreKind(name: "mappedkv.collections", version: formatVersion)

    /// Opens (or creates) the collection store `id` in `directory`.
    ///
    /// - Throws: ``CollectionError/notACollectionStore(id:)`` for a store that holds plain keys,
    ///   ``CollectionError/unsupportedFormat(id:version:)`` for a newer format, or the store's errors.
    public init(
        id: String, directory: String, configuration: Configuration = Configuration(), logger: Logger? = nil
    ) throws(CollectionError) {
        var configuration = configuration
        configuration.storeKind = Self.kind
        do {
            store = try MappedKV(id: id, directory: directory, configuration: configuration, logger: logger)
        } catch .wrongStoreKind(_, _, found: nil) {
            throw .notACollectionStore(id: id)
        } catch {
            throw .store(error)
        }
        do {
            let version = try Self.checkVersion(store, id: id)
            indexes = try CollectionIndexes.shared(for: store)
            if version == Self.versionWithoutCounts, !configuration.isReadOnly {
                let store = self.store
                try indexes.inSection { (transaction) throws(CollectionError) in
                    try BucketCount.upgrade(store, transaction)
                }
            }
        } catch {
            store.close()
            throw error
        }
    }

    /// Accepts a store whose marker holds a version this release reads (the store checked its
    /// kind); returns the version.
    @discardableResult
    private static func checkVersion(_ store: MappedKV, id: String) throws(CollectionError) -> String {
        let version: String?
        do { version = try store.string(forKey: kind.markerKey) } catch { throw .store(error) }
        guard let version else { return formatVersion }
        guard readableVersions.contains(version) else { throw .unsupportedFormat(id: id, version: version) }
        return version
    }

    /// The bucket `name`, its values encoded by `serializer`, with a cache of at most `cacheLimit`
    /// decoded entries. Handles are cheap; every handle of a bucket sees the same entries.
    public func bucket<S: EntrySerializer>(
        _ name: String, serializer: S, cacheLimit: Int = 1_000
    ) -> Bucket<S.Value> where S.Value: Sendable {
        Bucket(name: name, store: store, indexes: indexes, serializer: serializer, cacheLimit: cacheLimit)
    }

    /// The bucket `name` of `Codable` values stored as JSON.
    public func bucket<Value: Codable & Sendable>(
        _ name: String, of type: Value.Type, cacheLimit: Int = 1_000
    ) -> Bucket<Value> {
        bucket(name, serializer: JSONEntrySerializer<Value>(), cacheLimit: cacheLimit)
    }

    /// The names of the buckets that hold at least one entry, sorted by UTF-8 bytes.
    public func bucketNames() throws(CollectionError) -> [String] {
        let keys: [String]
        do { keys = try store.allKeys } catch { throw .store(error) }
        return Set(keys.compactMap { CollectionKey.decode($0)?.bucket })
            .sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
    }

    /// The names of the buckets that have at least one stored index, sorted by UTF-8 bytes.
    public func indexedBucketNames() throws(CollectionError) -> [String] {
        try indexes.synchronize()
        return indexes.state.withLock { state in
            state.buckets.filter { _, set in set.indexes.keys.contains { set.closures[$0] == nil } }.keys
                .map(\.string).sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
        }
    }

    /// Closes the store underneath; handles of its buckets fail afterwards. Like
    /// `MappedKV.close()`, it is a durability point: every write before it survives a power loss.
    public func close() {
        // The shared index cache keeps a handle of its own on the files while it lives, so this
        // handle's close may not be the files' last one: flush here. A failed flush closes the
        // store and is logged by it; `store.sync()` reports it to a caller that must know.
        try? store.sync()
        store.close()
    }
}
