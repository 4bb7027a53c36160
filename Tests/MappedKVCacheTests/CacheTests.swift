import Foundation
import MappedKVCache
import Testing

/// The combined cache: memory first, then disk with promotion; writes reach both sides; the
/// serializer is injected (JSON by default, bytes as they are); the async methods behave alike.
@Suite struct CacheTests {
    struct Profile: Codable, Sendable, Equatable {
        var name: String
        var age: Int
    }

    @Test func valuesAreServedFromMemoryThenFromDiskWithPromotion() throws {
        let dir = CacheTestDirectory("combined")
        let writer = try Cache<Profile>(directory: dir.path)
        let ada = Profile(name: "Ada", age: 36)
        try writer.set(ada, forKey: "u1")
        #expect(writer.memory.contains("u1"))
        #expect(try writer.value(forKey: "u1") == ada)
        // The disk side holds the JSON encoding.
        let json = try #require(try writer.disk.value(forKey: "u1"))
        #expect(try JSONDecoder().decode(Profile.self, from: Data(json)) == ada)
        // A second cache on the same directory finds it on disk and keeps it in memory.
        let reader = try Cache<Profile>(directory: dir.path)
        #expect(!reader.memory.contains("u1"))
        #expect(try reader.value(forKey: "u1") == ada)
        #expect(reader.memory.contains("u1"))
        try writer.removeValue(forKey: "u1")
        #expect(try writer.value(forKey: "u1") == nil)
        #expect(try writer.contains("u1") == false)
    }

    @Test func bytesAreStoredAsTheyAre() throws {
        let dir = CacheTestDirectory("combined-bytes")
        let cache = try Cache<[UInt8]>(directory: dir.path)
        try cache.set([1, 2, 3], forKey: "k")
        #expect(try cache.disk.value(forKey: "k") == [1, 2, 3])
        let data = try Cache<Data>(directory: dir.path + "-data")
        defer { try? FileManager.default.removeItem(atPath: dir.path + "-data") }
        try data.set(Data([4, 5]), forKey: "d")
        #expect(try data.disk.value(forKey: "d") == [4, 5])
    }

    @Test func bytesThatDoNotDecodeThrowAndRemoveTheEntry() throws {
        let dir = CacheTestDirectory("combined-undecodable")
        let cache = try Cache<Profile>(directory: dir.path)
        try cache.disk.set(Array("not json".utf8), forKey: "bad")
        #expect(throws: (any Error).self) { _ = try cache.value(forKey: "bad") }
        #expect(try cache.disk.value(forKey: "bad") == nil)
    }

    @Test func removeAllEmptiesBothSides() throws {
        let dir = CacheTestDirectory("combined-clear")
        let cache = try Cache<Profile>(directory: dir.path)
        for index in 0..<10 { try cache.set(Profile(name: "p\(index)", age: index), forKey: "k\(index)") }
        try cache.removeAll()
        #expect(cache.memory.count == 0)
        #expect(try cache.disk.statistics().count == 0)
    }

    @Test func asyncMethodsMatchTheSynchronousOnes() async throws {
        let dir = CacheTestDirectory("combined-async")
        let cache = try Cache<Profile>(directory: dir.path)
        let grace = Profile(name: "Grace", age: 85)
        try await cache.set(grace, forKey: "g")
        #expect(try await cache.value(forKey: "g") == grace)
        cache.memory.removeAll()
        #expect(try await cache.value(forKey: "g") == grace)
        try await cache.removeValue(forKey: "g")
        #expect(try await cache.value(forKey: "g") == nil)
        try await cache.set(grace, forKey: "h")
        try await cache.removeAll()
        #expect(try cache.disk.statistics().count == 0)
    }
}
