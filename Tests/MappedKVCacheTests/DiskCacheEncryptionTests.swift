// Proves that an encrypted DiskCache round-trips inline and file values (also across a reopen),
// that no plaintext reaches the disk (manifest or value files; each file has its own IV), that a
// damaged encrypted file is a miss, and that opening the cache with a wrong key or no key throws
// `CacheError.store` and leaves every file in the directory byte-for-byte unchanged.
import Foundation
import MappedKV
import MappedKVCache
import Testing

@Suite struct DiskCacheEncryptionTests {
    static let inlineSecret = Array("INLINE-PLAINTEXT-MARKER-42".utf8)
    static let fileSecret = Array(String(repeating: "FILE-PLAINTEXT-MARKER-", count: 40).utf8)

    func key(_ text: String) throws -> CryptKey { try #require(CryptKey(Array(text.utf8))) }

    func open(_ dir: CacheTestDirectory, key: CryptKey?) throws(CacheError) -> DiskCache {
        try DiskCache(directory: dir.path, configuration: DiskCacheConfiguration(inlineThreshold: 64, cryptKey: key))
    }

    /// A closed encrypted cache holding an inline value, two files with the same value and one with extended data.
    func populated(_ dir: CacheTestDirectory) throws {
        let cache = try open(dir, key: try key("key"))
        try cache.set(Self.inlineSecret, forKey: "inline", extendedData: Array("EXTENDED-MARKER".utf8))
        try cache.set(Self.fileSecret, forKey: "file")
        try cache.set(Self.fileSecret, forKey: "file-twin")
        cache.close()
    }

    @Test func valuesRoundTripAndNoPlaintextReachesTheDisk() throws {
        let dir = CacheTestDirectory("crypt")
        let cache = try open(dir, key: try key("key"))
        try cache.set(Self.inlineSecret, forKey: "inline", extendedData: Array("EXTENDED-MARKER".utf8))
        try cache.set(Self.fileSecret, forKey: "file")
        try cache.set(Self.fileSecret, forKey: "file-twin")
        #expect(try cache.value(forKey: "inline") == Self.inlineSecret)
        #expect(try cache.entry(forKey: "inline")?.extendedData == Array("EXTENDED-MARKER".utf8))
        #expect(try cache.value(forKey: "file") == Self.fileSecret)
        let statistics = try cache.statistics()
        #expect(statistics.inlineCount == 1 && statistics.fileCount == 2 && statistics.orphanCount == 0)
        cache.close()

        let tree = DiskFixtures.tree(dir.path)
        let markers = ["INLINE-PLAINTEXT", "FILE-PLAINTEXT", "EXTENDED-MARKER"].map { Array($0.utf8) }
        for case (let path, let bytes?) in tree {
            for marker in markers {
                #expect(!DiskFixtures.contains(bytes, marker), "\(path) holds plaintext")
            }
        }
        // Value files: header MKVC, version 1, flag 1 (encrypted), a 16-byte IV, then the ciphertext.
        let names = DiskFixtures.names(in: dir.file("files"))
        #expect(names.count == 2)
        let files = try names.map { try #require(DiskFixtures.contents(dir.file("files/" + $0))) }
        for bytes in files {
            #expect(bytes.count == 6 + 16 + Self.fileSecret.count)
            #expect(Array(bytes.prefix(6)) == Array("MKVC".utf8) + [1, 1])
        }
        #expect(files.count == 2 && files[0][6..<22] != files[1][6..<22], "two files share an IV")
        #expect(files.count == 2 && files[0][22...] != files[1][22...], "the same value encrypts the same way twice")

        let reopened = try open(dir, key: try key("key"))
        #expect(try reopened.value(forKey: "inline") == Self.inlineSecret)
        #expect(try reopened.value(forKey: "file") == Self.fileSecret)
        #expect(try reopened.value(forKey: "file-twin") == Self.fileSecret)
        #expect(try reopened.verify() == [])
    }

    @Test func aDamagedEncryptedFileIsAMiss() throws {
        let dir = CacheTestDirectory("crypt")
        try populated(dir)
        let cache = try open(dir, key: try key("key"))
        for name in DiskFixtures.names(in: dir.file("files")).prefix(1) {
            let path = dir.file("files/" + name)
            var bytes = try #require(DiskFixtures.contents(path))
            bytes[30] ^= 0x04
            try DiskFixtures.write(bytes, to: path)
        }
        let values = [try cache.value(forKey: "file"), try cache.value(forKey: "file-twin")]
        #expect(values.filter { $0 == nil }.count == 1)
        #expect(values.filter { $0 == Self.fileSecret }.count == 1)
        #expect(try cache.verify() == [])
        #expect(try cache.statistics().fileCount == 1)
    }

    @Test(arguments: ["wrong key", "k", "", "key-but-longer-than-sixteen-bytes"])
    func aWrongKeyOrNoKeyIsRefusedAndChangesNothing(wrong: String) throws {
        let dir = CacheTestDirectory("crypt")
        try populated(dir)
        let before = DiskFixtures.tree(dir.path)
        #expect(before.keys.contains("manifest") && before.keys.contains("manifest.crc"), "\(before.keys.sorted())")
        let wrongKey = CryptKey(Array(wrong.utf8))  // nil for "": no key at all
        do {
            let cache = try open(dir, key: wrongKey)
            cache.close()
            Issue.record("opened an encrypted cache with \(wrongKey.map { _ in "key '\(wrong)'" } ?? "no key")")
        } catch {
            #expect(error.isStore, "\(error)")
        }
        let after = DiskFixtures.tree(dir.path)
        #expect(after.keys.sorted() == before.keys.sorted())
        for (path, bytes) in before { #expect(after[path] == bytes, "\(path) changed") }

        let cache = try open(dir, key: try key("key"))
        #expect(try cache.value(forKey: "inline") == Self.inlineSecret)
        #expect(try cache.value(forKey: "file") == Self.fileSecret)
        #expect(try cache.verify() == [])
    }
}
