// Proves the read of a value file larger than one read chunk (the 128 KiB at a time an encrypted
// value is decrypted and checksummed): a 300 KiB value, plain and encrypted, reads back exactly
// (also after a reopen), and the same file one byte shorter, one byte longer, with a byte flipped
// in its first or last chunk, or with its last byte cut and another appended (same length, other
// bytes) is a miss that is dropped, never other bytes.
import Foundation
import MappedKV
import MappedKVCache
import Testing

@Suite struct DiskCacheLargeValueTests {
    static let size = 300 << 10

    enum Damage: String, CaseIterable, Sendable {
        case none, oneByteShorter, oneByteLonger, flippedInFirstChunk, flippedInLastChunk, lastByteReplaced
    }

    func open(_ dir: CacheTestDirectory, encrypted: Bool) throws -> DiskCache {
        let key = encrypted ? CryptKey(Array("large-key".utf8)) : nil
        return try DiskCache(directory: dir.path, configuration: DiskCacheConfiguration(cryptKey: key))
    }

    @Test(arguments: [false, true], Damage.allCases)
    func aLargeValueReadsBackExactlyOrIsAMiss(encrypted: Bool, damage: Damage) throws {
        let dir = CacheTestDirectory("large")
        var random = DiskTestRandom(seed: 0x1A46E)
        let value = random.bytes(Self.size)
        let other = random.bytes(100)
        do {
            let cache = try open(dir, encrypted: encrypted)
            try cache.set(value, forKey: "large")
            try cache.set(other, forKey: "small")
            #expect(try cache.value(forKey: "large") == value)
            cache.close()
        }
        let names = DiskFixtures.names(in: dir.file("files"))
        try #require(names.count == 1)
        let path = dir.file("files/" + names[0])
        var bytes = try #require(DiskFixtures.contents(path))
        let header = encrypted ? 22 : 6
        #expect(bytes.count == header + Self.size)
        switch damage {
        case .none: break
        case .oneByteShorter: bytes.removeLast()
        case .oneByteLonger: bytes.append(0)
        case .flippedInFirstChunk: bytes[header + 1000] ^= 0x20
        case .flippedInLastChunk: bytes[header + Self.size - 1000] ^= 0x20
        case .lastByteReplaced: bytes[bytes.count - 1] ^= 0xFF
        }
        try DiskFixtures.write(bytes, to: path)

        let cache = try open(dir, encrypted: encrypted)
        if damage == .none {
            #expect(try cache.value(forKey: "large") == value)
            #expect(try cache.statistics().fileCount == 1)
        } else {
            #expect(try cache.value(forKey: "large") == nil)
            #expect(try cache.contains("large") == false, "the damaged entry is dropped")
            #expect(!FileManager.default.fileExists(atPath: path))
        }
        #expect(try cache.value(forKey: "small") == other)
        #expect(try cache.verify() == [])
    }
}
