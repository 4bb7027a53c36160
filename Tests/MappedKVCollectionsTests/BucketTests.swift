import Foundation
import MappedKV
import Testing

@testable import MappedKVCollections

/// A temporary directory removed when the value goes away.
final class ScratchDirectory {
    let path: String
    init() throws {
        path = FileManager.default.temporaryDirectory.appendingPathComponent("collections-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }
    deinit { try? FileManager.default.removeItem(atPath: path) }
}

struct Post: Codable, Sendable, Equatable {
    var title: String
    var likes: Int
}

/// A serializer that records which bucket and key it was called for.
struct TaggingSerializer: EntrySerializer {
    func encode(_ value: String, bucket: String, key: String) throws -> [UInt8] {
        Array("\(bucket)/\(key)=\(value)".utf8)
    }
    func decode(_ bytes: [UInt8], bucket: String, key: String) throws -> String {
        let text = String(decoding: bytes, as: UTF8.self)
        let prefix = "\(bucket)/\(key)="
        guard text.hasPrefix(prefix) else { throw CocoaError(.coderReadCorrupt) }
        return String(text.dropFirst(prefix.count))
    }
}

@Suite("Buckets")
struct BucketTests {
    @Test("put, value, entry, remove, keys and count; metadata and times kept with the value")
    func basics() throws {
        let dir = try ScratchDirectory()
        let collections = try CollectionStore(id: "feed", directory: dir.path)
        let posts = collections.bucket("posts", of: Post.self)
        let downloaded = Date(timeIntervalSince1970: 1_700_000_000.5)
        let metadata: [String: MetadataValue] = [
            "downloaded": .date(downloaded), "source": .string("api"), "rank": .int(-3), "score": .double(0.25),
        ]
        let before = Date()
        try posts.put(Post(title: "Hello", likes: 1), forKey: "1000", metadata: metadata)
        let entry = try #require(try posts.entry(forKey: "1000"))
        #expect(entry.value == Post(title: "Hello", likes: 1) && entry.metadata == metadata)
        #expect(entry.bucket == "posts" && entry.key == "1000")
        #expect(abs(entry.created.timeIntervalSince(before)) < 5 && entry.created == entry.modified)

        try posts.put(Post(title: "Hello again", likes: 2), forKey: "1000")
        let updated = try #require(try posts.entry(forKey: "1000"))
        #expect(updated.value.likes == 2 && updated.metadata.isEmpty, "a put replaces the metadata")
        #expect(updated.created == entry.created, "the creation time survives a put")
        #expect(updated.modified >= entry.modified)

        try posts.put(Post(title: "b", likes: 0), forKey: "b")
        try posts.put(Post(title: "a", likes: 0), forKey: "a")
        #expect(try posts.keys() == ["1000", "a", "b"] && (try posts.count) == 3)
        #expect(try posts.entries().map(\.key) == ["1000", "a", "b"])
        #expect(try posts.remove("a") && !(try posts.remove("a")))
        #expect(try posts.value(forKey: "a") == nil && !(try posts.contains("a")))
        #expect(try collections.bucketNames() == ["posts"])
    }

    @Test("the same key in different buckets, and names with separators, are different entries")
    func bucketsDoNotCollide() throws {
        let dir = try ScratchDirectory()
        let collections = try CollectionStore(id: "c", directory: dir.path)
        let feeds = collections.bucket("feed", of: String.self)
        let comments = collections.bucket("comment", of: String.self)
        try feeds.put("a feed", forKey: "1000")
        try comments.put("a comment", forKey: "1000")
        #expect(try feeds.value(forKey: "1000") == "a feed" && (try comments.value(forKey: "1000")) == "a comment")
        try collections.bucket("a:b", of: String.self).put("first", forKey: "c")
        try collections.bucket("a", of: String.self).put("second", forKey: "b:c")
        #expect(try collections.bucket("a:b", of: String.self).value(forKey: "c") == "first")
        #expect(try collections.bucket("a", of: String.self).keys() == ["b:c"])
        #expect(try collections.bucketNames() == ["a", "a:b", "comment", "feed"])
    }

    @Test("the injected serializer is given the bucket and key; a value it cannot decode is a clear error")
    func serializers() throws {
        let dir = try ScratchDirectory()
        let collections = try CollectionStore(id: "c", directory: dir.path)
        let tagged = collections.bucket("tags", serializer: TaggingSerializer())
        try tagged.put("v", forKey: "k")
        #expect(try tagged.value(forKey: "k") == "v")
        let raw = collections.bucket("tags", serializer: RawEntrySerializer())
        #expect(try raw.value(forKey: "k") == Array("tags/k=v".utf8))
        let asPosts = collections.bucket("tags", of: Post.self)
        #expect {
            _ = try asPosts.value(forKey: "k")
        } throws: { error in
            guard case CollectionError.decodingFailed(let bucket, let key, _) = error else { return false }
            return bucket == "tags" && key == "k"
        }
    }

    @Test("the decoded cache is bounded and never serves a value after another handle's write")
    func cacheFollowsWrites() throws {
        let dir = try ScratchDirectory()
        let collections = try CollectionStore(id: "c", directory: dir.path)
        let reader = collections.bucket("b", of: Post.self, cacheLimit: 2)
        let writer = try CollectionStore(id: "c", directory: dir.path).bucket("b", of: Post.self)
        for (index, key) in ["x", "y", "z"].enumerated() {
            try writer.put(Post(title: key, likes: index), forKey: key)
            #expect(try reader.value(forKey: key)?.likes == index)
        }
        #expect(reader.cachedEntryCount == 2)
        try writer.put(Post(title: "z", likes: 99), forKey: "z")
        #expect(try reader.value(forKey: "z")?.likes == 99)
        try writer.remove("z")
        #expect(try reader.value(forKey: "z") == nil)
    }

    @Test("a plain store is not opened as a collection store, nor a collection store as a plain one")
    func storeKindsAreKept() throws {
        let dir = try ScratchDirectory()
        let plain = try MappedKV(id: "plain", directory: dir.path)
        try plain.set("v", forKey: "k")
        plain.close()
        #expect(throws: CollectionError.notACollectionStore(id: "plain")) {
            _ = try CollectionStore(id: "plain", directory: dir.path)
        }
        #expect(try MappedKV(id: "plain", directory: dir.path).string(forKey: "k") == "v", "the plain store is intact")

        let collections = try CollectionStore(id: "coll", directory: dir.path)
        try collections.bucket("b", of: Int.self).put(1, forKey: "k")
        collections.close()
        #expect(throws: MappedKVError.wrongStoreKind(id: "coll", expected: nil, found: "mappedkv.collections")) {
            _ = try MappedKV(id: "coll", directory: dir.path)
        }
        let reopened = try CollectionStore(id: "coll", directory: dir.path)
        #expect(try reopened.bucket("b", of: Int.self).value(forKey: "k") == 1)
    }

    @Test("a collection store marked by an earlier release (the version key alone) opens, and is then marked in full")
    func storesMarkedByEarlierReleasesOpen() throws {
        let dir = try ScratchDirectory()
        let early = try MappedKV(id: "early", directory: dir.path)
        try early.set("1", forKey: "\u{1}mappedkv.collections")
        early.close()
        let collections = try CollectionStore(id: "early", directory: dir.path)
        try collections.bucket("b", of: Int.self).put(7, forKey: "k")
        #expect(try collections.store.string(forKey: StoreKind.kindKey) == "mappedkv.collections")
        #expect(try collections.store.string(forKey: "\u{1}mappedkv.collections") == "2", "upgraded at open")
        #expect(try collections.bucket("b", of: Int.self).count == 1)
        collections.close()
        #expect(try CollectionStore(id: "early", directory: dir.path).bucket("b", of: Int.self).value(forKey: "k") == 7)

        let newer = try MappedKV(id: "newer", directory: dir.path)
        try newer.set("3", forKey: "\u{1}mappedkv.collections")
        newer.close()
        #expect(throws: CollectionError.unsupportedFormat(id: "newer", version: "3")) {
            _ = try CollectionStore(id: "newer", directory: dir.path)
        }
    }

    @Test("entry records round-trip every metadata type and refuse bytes that are not records")
    func entryRecords() throws {
        let record = EntryRecord(
            createdMilliseconds: -5, modifiedMilliseconds: 1_700_000_000_123,
            metadata: [
                "s": .string("é"), "i": .int(.min), "j": .int(.max), "d": .double(-0.5),
                "t": .date(Date(timeIntervalSince1970: 12.25)),
            ], valueBytes: [1, 2, 3])
        let bytes = record.encoded()
        #expect(try bytes.withUnsafeBytes { try EntryRecord(decoding: $0) } == record)
        for bad: [UInt8] in [[], [2], [1], [1, 0, 0, 1, 1, 0x61, 9], [1, 0, 0, 1, 5, 0x61]] {
            #expect(throws: EntryRecordError.self) { _ = try bad.withUnsafeBytes { try EntryRecord(decoding: $0) } }
        }
    }

    @Test("a record written in place has the bytes of its encoding, and nothing past them")
    func entryRecordsWriteInPlace() throws {
        let times: [Int64] = [0, -1, 63, -64, 64, 1_700_000_000_123, -1_700_000_000_123, .max, .min]
        let values: [[UInt8]] = [[], [0], Array(repeating: 0xAB, count: 300)]
        for created in times {
            for modified in times.reversed() {
                for value in values {
                    for metadata: [String: MetadataValue] in [[:], ["b": .int(-2), "a": .string("x")]] {
                        let record = EntryRecord(
                            createdMilliseconds: created, modifiedMilliseconds: modified, metadata: metadata,
                            valueBytes: value)
                        let encoded = record.encoded()
                        // Only a record without metadata knows its length beforehand.
                        #expect(record.directPayloadLength == (metadata.isEmpty ? encoded.count : nil))
                        var buffer = [UInt8](repeating: 0xEE, count: encoded.count + 8)
                        buffer.withUnsafeMutableBytes { bytes in
                            guard let base = bytes.baseAddress else { return }
                            record.writePayload(to: base)
                        }
                        #expect(Array(buffer.prefix(encoded.count)) == encoded)
                        #expect(buffer.suffix(8).allSatisfy { $0 == 0xEE })
                    }
                }
            }
        }
    }
}
