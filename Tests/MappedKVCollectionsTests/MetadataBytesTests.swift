import Foundation
import MappedKV
import Testing

@testable import MappedKVCollections

/// The bytes metadata value.
@Suite("Bytes metadata")
struct MetadataBytesTests {
    @Test("bytes metadata round-trips, through a reopen, and is never an index's value")
    func bytesMetadata() throws {
        let dir = try ScratchDirectory()
        var collections = try CollectionStore(id: "feed", directory: dir.path)
        let blob: [UInt8] = [0, 1, 2, 0xFF, 0x80]
        try collections.bucket("b", of: Int.self).put(
            1, forKey: "k", metadata: ["blob": .bytes(blob), "e": .bytes([])])
        try collections.bucket("b", of: Int.self).addIndex("blob", type: .string, source: .metadata("blob"))
        collections.close()
        collections = try CollectionStore(id: "feed", directory: dir.path)
        let bucket = collections.bucket("b", of: Int.self)
        let entry = try #require(try bucket.entry(forKey: "k"))
        #expect(entry.metadata == ["blob": .bytes(blob), "e": .bytes([])])
        #expect(MetadataValue.bytes(blob).description == "AAEC/4A=")
        #expect(try bucket.count(where: [.greaterOrEqual("blob", .string(""))]) == 0)
        collections.close()

        let record = EntryRecord(
            createdMilliseconds: 1, modifiedMilliseconds: 2, metadata: ["b": .bytes(blob)], valueBytes: [7])
        let bytes = record.encoded()
        #expect(try bytes.withUnsafeBytes { try EntryRecord(decoding: $0) } == record)
        // A bytes item whose length runs past the payload is refused.
        let truncated: [UInt8] = [1, 2, 4, 1, 1, 0x62, 5, 9, 1]
        #expect(throws: EntryRecordError.self) { _ = try truncated.withUnsafeBytes { try EntryRecord(decoding: $0) } }
    }
}
