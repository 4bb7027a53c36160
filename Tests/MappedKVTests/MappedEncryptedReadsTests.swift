import Foundation
import Testing

@testable import MappedKV

/// An encrypted store reads through its mappings as a plain one does, decrypting only the pages
/// of the region its reads reach (docs/FORMAT.md 12.6): records across page boundaries, values of
/// many pages, records appended after the index file's state, and a wrong key.
@Suite("Encrypted reads through the mappings")
struct MappedEncryptedReadsTests {
    static let key = CryptKey(Array("mapped-encrypted-key".utf8))
    static let configuration = Configuration(cryptKey: key)

    static func decryptedPages(_ store: MappedKV) -> Int? {
        store.shared.core.withLock { $0.mappedReads.pages?.decryptedPageCount }
    }

    /// A value of `length` bytes that depends on `seed`.
    static func value(_ seed: UInt64, length: Int) -> [UInt8] {
        var random = SplitMix64(seed: seed)
        return (0..<length).map { _ in UInt8(truncatingIfNeeded: random.next()) }
    }

    @Test("values of every length, across page boundaries, read right; a read decrypts only its pages")
    func lengthsAndPages() throws {
        let dir = TemporaryDirectory("mapped-encrypted-lengths")
        var random = SplitMix64(seed: 49)
        var model: [String: [UInt8]] = [:]
        let store = try MappedKV(id: "s", directory: dir.path, configuration: Self.configuration)
        for i in 0..<600 {
            // Mostly short values, some of several pages.
            let length = i % 10 == 0 ? Int(random.next() % 20_000) : Int(random.next() % 300)
            let bytes = Self.value(random.next(), length: length)
            try store.set(bytes, forKey: "key-\(i)")
            model["key-\(i)"] = bytes
        }
        store.close()
        let mapped = try MappedKV(id: "s", directory: dir.path, configuration: Self.configuration)
        #expect(MappedReadsTests.isMapped(mapped))
        let before = try #require(Self.decryptedPages(mapped))
        let sample = try #require(model.first { $0.value.count > 3 * DecryptedPages.pageSize })
        #expect(try mapped.bytes(forKey: sample.key) == sample.value)
        let after = try #require(Self.decryptedPages(mapped))
        // The record's pages, and at most one more for each other record its hash met.
        let spanned = sample.value.count / DecryptedPages.pageSize + 2
        #expect(after - before <= spanned + 2, "one read decrypted \(after - before) pages")
        for (key, value) in model { #expect(try mapped.bytes(forKey: key) == value, "\(key)") }
        #expect(try mapped.bytes(forKey: "absent") == nil)
        #expect(try mapped.count == model.count)
        #expect(MappedReadsTests.isMapped(mapped))
    }

    @Test("records appended after the index file's state are read from the overlay, deletions too")
    func appendedTail() throws {
        let dir = TemporaryDirectory("mapped-encrypted-tail")
        var model: [String: Int64] = [:]
        let store = try MappedKV(id: "s", directory: dir.path, configuration: Self.configuration)
        for i in 0..<2_000 {
            try store.set(Int64(i), forKey: "k\(i)")
            model["k\(i)"] = Int64(i)
        }
        store.close()
        // Writes that leave the index file behind the log: the next open adopts it and decodes
        // (and decrypts) the records after it.
        var withoutIndex = Self.configuration
        withoutIndex.usesIndexFile = false
        let writer = try MappedKV(id: "s", directory: dir.path, configuration: withoutIndex)
        for i in stride(from: 0, to: 2_000, by: 3) {
            try writer.set(Int64(-i), forKey: "k\(i)")
            model["k\(i)"] = Int64(-i)
        }
        for i in stride(from: 1, to: 2_000, by: 7) {
            try writer.removeValue(forKey: "k\(i)")
            model["k\(i)"] = nil
        }
        try writer.set(Int64(77), forKey: "new")
        model["new"] = 77
        writer.close()
        let mapped = try MappedKV(id: "s", directory: dir.path, configuration: Self.configuration)
        #expect(MappedReadsTests.isMapped(mapped))
        #expect(try mapped.count == model.count)
        for i in 0..<2_000 { #expect(try mapped.int64(forKey: "k\(i)") == model["k\(i)"], "k\(i)") }
        #expect(try mapped.int64(forKey: "new") == 77)
        #expect(MappedReadsTests.isMapped(mapped))
        mapped.close()
        let again = try MappedKV(id: "s", directory: dir.path, configuration: Self.configuration)
        try IndexFileTests.expectMatches(again, model, "after the reopen")
    }

    @Test("decryptsPagesOnRead false keeps the private decrypted copy, adopted from the index file")
    func privateCopyOption() throws {
        let dir = TemporaryDirectory("mapped-encrypted-private")
        let store = try MappedKV(id: "s", directory: dir.path, configuration: Self.configuration)
        for i in 0..<500 { try store.set("value \(i)", forKey: "k\(i)") }
        store.close()
        var privateCopy = Self.configuration
        privateCopy.decryptsPagesOnRead = false
        let reopened = try MappedKV(id: "s", directory: dir.path, configuration: privateCopy)
        #expect(!MappedReadsTests.isMapped(reopened))
        #expect(reopened.shared.core.withLock { $0.findings.indexOutcome } == .adopted)
        #expect(try reopened.string(forKey: "k123") == "value 123")
    }

    @Test("a wrong key is refused as without the index file, and the right one then maps the store")
    func wrongKey() throws {
        let dir = TemporaryDirectory("mapped-encrypted-wrong-key")
        let store = try MappedKV(id: "s", directory: dir.path, configuration: Self.configuration)
        for i in 0..<500 { try store.set("value \(i)", forKey: "k\(i)") }
        store.close()
        let wrong = Configuration(cryptKey: CryptKey(Array("another-key".utf8)))
        #expect {
            _ = try MappedKV(id: "s", directory: dir.path, configuration: wrong)
        } throws: { error in
            guard case MappedKVError.wrongCryptKey = error else { return false }
            return true
        }
        #expect(throws: MappedKVError.self) { _ = try MappedKV(id: "s", directory: dir.path) }
        let right = try MappedKV(id: "s", directory: dir.path, configuration: Self.configuration)
        #expect(MappedReadsTests.isMapped(right))
        #expect(try right.string(forKey: "k499") == "value 499")
    }
}
