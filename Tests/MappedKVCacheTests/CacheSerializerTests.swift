// Round trips through the cache serializers.
//
// Invariant: every serializer gives back what it was given.

import Foundation
import Testing

@testable import MappedKVCache

@Suite("Cache serializers")
struct CacheSerializerTests {
    struct Profile: Codable, Equatable, Sendable {
        var name: String
        var age: Int
        var tags: [String]
        var scores: [String: Double]
        var avatar: Data?
        var nickname: String?
    }

    static let profiles = [
        Profile(
            name: "Zoë ✓", age: 41, tags: ["a", ""], scores: ["x": 1.5, "y": -0.25],
            avatar: Data([0, 1, 255]), nickname: nil),
        Profile(name: "", age: 0, tags: [], scores: [:], avatar: nil, nickname: "n"),
    ]

    @Test(arguments: profiles)
    func jsonRoundTripsCodableValues(profile: Profile) throws {
        let serializer = JSONCacheSerializer<Profile>()
        let bytes = try serializer.encode(profile)
        #expect(try serializer.decode(bytes) == profile)
        #expect(try serializer.encode(profile) == bytes, "sorted keys make encoding deterministic")
    }

    @Test func jsonRoundTripsTopLevelScalarsAndCollections() throws {
        #expect(try JSONCacheSerializer<Int>().decode(JSONCacheSerializer<Int>().encode(-42)) == -42)
        #expect(try JSONCacheSerializer<String>().decode(JSONCacheSerializer<String>().encode("hé")) == "hé")
        let nested = ["b": [1, 2], "a": []]
        let serializer = JSONCacheSerializer<[String: [Int]]>()
        #expect(try serializer.decode(serializer.encode(nested)) == nested)
        #expect(try String(decoding: serializer.encode(nested), as: UTF8.self) == #"{"a":[],"b":[1,2]}"#)
    }

    @Test func jsonRejectsBytesThatAreNotAValue() {
        #expect(throws: DecodingError.self) { try JSONCacheSerializer<Profile>().decode(Array("{".utf8)) }
        #expect(throws: DecodingError.self) { try JSONCacheSerializer<Int>().decode(Array(#""x""#.utf8)) }
    }

    @Test func bytesAndDataAreStoredAsTheyAre() throws {
        let bytes: [UInt8] = [0, 1, 2, 254, 255]
        #expect(BytesCacheSerializer().encode(bytes) == bytes)
        #expect(BytesCacheSerializer().decode(bytes) == bytes)
        #expect(BytesCacheSerializer().encode([]) == [])
        let data = Data(bytes)
        #expect(DataCacheSerializer().encode(data) == bytes)
        #expect(DataCacheSerializer().decode(bytes) == data)
        #expect(DataCacheSerializer().decode([]) == Data())
    }

    @Test func serializersWorkThroughTheProtocol() throws {
        func roundTrip<S: CacheSerializer>(_ serializer: S, _ value: S.Value) throws -> S.Value {
            try serializer.decode(serializer.encode(value))
        }
        let serializers: [any CacheSerializer<[UInt8]>] = [BytesCacheSerializer(), JSONCacheSerializer<[UInt8]>()]
        for serializer in serializers {
            #expect(try roundTrip(serializer, [9, 8, 7]) == [9, 8, 7])
        }
        #expect(try roundTrip(DataCacheSerializer(), Data("x".utf8)) == Data("x".utf8))
    }
}
