import Foundation
import MappedKVFormat
import Testing

@testable import MappedKV

/// `set(_:forKey:)` and `value(forKey:as:)` take any Codable value: the native MMKV payload for
/// types that have one, JSON otherwise. The exact bytes of every native type are pinned here, so
/// MMKV compatibility cannot change silently through overload resolution.
@Suite struct CodableValueTests {
    struct Profile: Codable, Equatable {
        var name: String
        var tags: [String]
    }

    static let uuid = UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")!
    static let url = URL(string: "https://example.com/a?b=1")!
    static let date = Date(timeIntervalSince1970: 1_700_000_000.25)

    /// Key -> the payload MMKV stores for the sample value of that type (docs/FORMAT.md 2.5).
    static let pinned: [String: String] = [
        "bool": "01",
        "int32": "d6ffffffffffffffff01",
        "uint32": "ac02",
        "int64": "80ccbbbcdeffffffff01",
        "uint64": "808080808020",
        "int": "ffffffffffffffffff01",
        "float": "0000c03f",
        "double": "0000000000000240",
        "string": "0568656c6c6f",
        "bytes": "03010203",
        "data": "01ff",
        "strings": "050161026263",
        "date": "00001040fc54d941",
        "uuid": "2465363231653166382d633336632d343935612d393366632d306332343761336536653566",
        "url": "1968747470733a2f2f6578616d706c652e636f6d2f613f623d31",
    ]

    /// Writes the sample of every native type through `set(_:forKey:)` in a concrete context.
    static func writeConcretely(_ store: MappedKV, prefix: String = "") throws {
        try store.set(true, forKey: prefix + "bool")
        try store.set(Int32(-42), forKey: prefix + "int32")
        try store.set(UInt32(300), forKey: prefix + "uint32")
        try store.set(Int64(-9_000_000_000), forKey: prefix + "int64")
        try store.set(UInt64(1) << 40, forKey: prefix + "uint64")
        try store.set(-1, forKey: prefix + "int")
        try store.set(Float(1.5), forKey: prefix + "float")
        try store.set(2.25, forKey: prefix + "double")
        try store.set("hello", forKey: prefix + "string")
        try store.set([UInt8]([1, 2, 3]), forKey: prefix + "bytes")
        try store.set(Data([0xFF]), forKey: prefix + "data")
        try store.set(["a", "bc"], forKey: prefix + "strings")
        try store.set(date, forKey: prefix + "date")
        try store.set(uuid, forKey: prefix + "uuid")
        try store.set(url, forKey: prefix + "url")
    }

    /// Stores `value` through a function that knows only that it is `Codable`.
    static func setCodable<T: Codable>(_ value: T, forKey key: String, in store: some KeyValueAccess) throws {
        try store.set(value, forKey: key)
    }

    /// Reads `key` through a function that knows only that `T` is `Codable`.
    static func readCodable<T: Codable>(_ type: T.Type, forKey key: String, in store: some KeyValueAccess) throws -> T?
    {
        try store.value(forKey: key, as: type)
    }

    /// Writes every sample through ``setCodable(_:forKey:in:)``.
    static func writeGenerically(_ store: some KeyValueAccess, prefix: String) throws {
        try setCodable(true, forKey: prefix + "bool", in: store)
        try setCodable(Int32(-42), forKey: prefix + "int32", in: store)
        try setCodable(UInt32(300), forKey: prefix + "uint32", in: store)
        try setCodable(Int64(-9_000_000_000), forKey: prefix + "int64", in: store)
        try setCodable(UInt64(1) << 40, forKey: prefix + "uint64", in: store)
        try setCodable(-1, forKey: prefix + "int", in: store)
        try setCodable(Float(1.5), forKey: prefix + "float", in: store)
        try setCodable(2.25, forKey: prefix + "double", in: store)
        try setCodable("hello", forKey: prefix + "string", in: store)
        try setCodable([UInt8]([1, 2, 3]), forKey: prefix + "bytes", in: store)
        try setCodable(Data([0xFF]), forKey: prefix + "data", in: store)
        try setCodable(["a", "bc"], forKey: prefix + "strings", in: store)
        try setCodable(date, forKey: prefix + "date", in: store)
        try setCodable(uuid, forKey: prefix + "uuid", in: store)
        try setCodable(url, forKey: prefix + "url", in: store)
    }

    func expectPinned(_ store: MappedKV, prefix: String, _ comment: String) throws {
        for (key, expected) in Self.pinned.sorted(by: { $0.key < $1.key }) {
            let stored = try #require(try store.payload(forKey: prefix + key), "\(comment): \(key) missing")
            #expect(hex(stored) == expected, "\(comment): \(key) stored \(hex(stored)), MMKV stores \(expected)")
        }
    }

    @Test func everyNativeTypeStoresItsExactMMKVPayloadWhateverTheCallSite() throws {
        let dir = TemporaryDirectory("codable-pinned")
        let store = try MappedKV(id: "s", directory: dir.path)
        try Self.writeConcretely(store)
        try expectPinned(store, prefix: "", "concrete set")
        try Self.writeGenerically(store, prefix: "g.")
        try expectPinned(store, prefix: "g.", "set through a generic Codable function")
        try store.withExclusiveLock { tx in try Self.writeGenerically(tx, prefix: "t.") }
        try expectPinned(store, prefix: "t.", "set through a transaction")
        // The encoder is for JSON only: a native type ignores it.
        try store.set(Int32(-42), forKey: "e.int32", encoder: JSONEncoder())
        #expect(try store.payload(forKey: "e.int32").map(hex) == Self.pinned["int32"])
    }

    @Test func everyNativeTypeReadsBackThroughEveryReader() throws {
        let dir = TemporaryDirectory("codable-read")
        let store = try MappedKV(id: "s", directory: dir.path)
        try Self.writeConcretely(store)
        #expect(try store.value(forKey: "int32", as: Int32.self) == -42)
        #expect(try Self.readCodable(Int32.self, forKey: "int32", in: store) == -42)
        #expect(try Self.readCodable(UInt64.self, forKey: "uint64", in: store) == 1 << 40)
        #expect(try Self.readCodable(String.self, forKey: "string", in: store) == "hello")
        #expect(try Self.readCodable([String].self, forKey: "strings", in: store) == ["a", "bc"])
        #expect(try Self.readCodable(Data.self, forKey: "data", in: store) == Data([0xFF]))
        #expect(try Self.readCodable(Date.self, forKey: "date", in: store) == Self.date)
        #expect(try Self.readCodable(UUID.self, forKey: "uuid", in: store) == Self.uuid)
        #expect(try Self.readCodable(URL.self, forKey: "url", in: store) == Self.url)
        #expect(try store.value(forKey: "uuid", as: UUID.self) == Self.uuid)
        #expect(try store.value(forKey: "url", as: URL.self) == Self.url)
        #expect(try store.string(forKey: "uuid") == "e621e1f8-c36c-495a-93fc-0c247a3e6e5f", "MMKV reads a string")
        #expect(try store.string(forKey: "url") == "https://example.com/a?b=1")
        let fromTransaction = try store.withExclusiveLock { tx in
            try Self.readCodable(Double.self, forKey: "double", in: tx)
        }
        #expect(fromTransaction == 2.25)
    }

    @Test func otherCodableTypesAreJSONInABytesPayload() throws {
        let dir = TemporaryDirectory("codable-json")
        let store = try MappedKV(id: "s", directory: dir.path)
        let profile = Profile(name: "svc", tags: ["a"])
        try store.set(profile, forKey: "profile")
        let sorted = JSONEncoder()
        sorted.outputFormatting = .sortedKeys
        let json = try sorted.encode(profile)
        let stored = try store.payload(forKey: "profile")
        #expect(
            stored == Data(json).payloadBytes,
            "\(stored.map { String(decoding: $0, as: UTF8.self) } ?? "") vs \(String(decoding: json, as: UTF8.self))")
        #expect(try store.value(forKey: "profile", as: Profile.self) == profile)
        let inferred: Profile? = try store.value(forKey: "profile")
        #expect(inferred == profile)
        #expect(try store.value(forKey: "absent", as: Profile.self) == nil)
        #expect(try store.value(forKey: "absent", default: profile) == profile)
        // [Int] is MMKV's numeric vector (varint(total) + packed varints), not JSON; an array of a
        // Codable struct has no native payload, so it is JSON.
        try store.set([1, 300] as [Int], forKey: "ints")
        #expect(try store.payload(forKey: "ints") == [0x03, 0x01, 0xAC, 0x02])
        #expect(try store.value(forKey: "ints", as: [Int].self) == [1, 300])
        try store.set([profile], forKey: "profiles")
        #expect(try store.payload(forKey: "profiles") == Data(try sorted.encode([profile])).payloadBytes)
        #expect(try store.value(forKey: "profiles", as: [Profile].self) == [profile])
        // Optional<Int32> has no native payload either (the check is on the type, not the value),
        // so it is JSON both ways and reads back as it was written.
        try store.set(Int32?.some(7), forKey: "optional")
        #expect(try store.payload(forKey: "optional") == Data("7".utf8).payloadBytes)
        #expect(try store.value(forKey: "optional", as: Int32?.self) == .some(7))
        // A custom encoder and decoder.
        let encoder = JSONEncoder()
        encoder.keyEncodingStrategy = .convertToSnakeCase
        struct Snake: Codable, Equatable { var twoWords: Int }
        try store.set(Snake(twoWords: 2), forKey: "snake", encoder: encoder)
        #expect(try store.payload(forKey: "snake") == Data(#"{"two_words":2}"#.utf8).payloadBytes)
        let decoder = JSONDecoder()
        decoder.keyDecodingStrategy = .convertFromSnakeCase
        #expect(try store.value(forKey: "snake", as: Snake.self, decoder: decoder) == Snake(twoWords: 2))
        #expect(throws: MappedKVError.self) { _ = try store.value(forKey: "snake", as: Snake.self) }
    }

    @Test func jsonThatDoesNotDecodeThrowsValueDecodingFailed() throws {
        let dir = TemporaryDirectory("codable-bad-json")
        let store = try MappedKV(id: "s", directory: dir.path)
        try store.set([UInt8](Array("{not json".utf8)), forKey: "bad")
        let error = #expect(throws: MappedKVError.self) { _ = try store.value(forKey: "bad", as: Profile.self) }
        guard case .valueDecodingFailed(let key, let type, _)? = error else {
            Issue.record("expected valueDecodingFailed, got \(String(describing: error))")
            return
        }
        #expect(key == "bad" && type.hasSuffix("Profile"))
    }

    @Test func expiringValuesFollowTheSameRule() throws {
        let dir = TemporaryDirectory("codable-expiry")
        let store = try MappedKV(id: "s", directory: dir.path)
        try store.enableKeyExpiry()
        try store.set(Int32(-42), forKey: "int32", expiresAfter: .seconds(60))
        try store.set(Self.uuid, forKey: "uuid", expiresAfter: .seconds(60))
        try Self.setExpiring(Self.date, forKey: "date", in: store)
        for key in ["int32", "uuid", "date"] {
            #expect(try store.payload(forKey: key).map(hex) == Self.pinned[key], "\(key)")
        }
        let profile = Profile(name: "svc", tags: [])
        try store.set(profile, forKey: "profile", expiresAfter: .seconds(60))
        #expect(try store.value(forKey: "profile", as: Profile.self) == profile)
        let inferred: Int32? = try store.value(forKey: "int32")
        #expect(inferred == -42)
    }

    /// Stores an expiring value through a function that knows only that it is `Codable`.
    static func setExpiring<T: Codable>(_ value: T, forKey key: String, in store: MappedKV) throws {
        try store.set(value, forKey: key, expiresAfter: .seconds(60))
    }

    @available(*, deprecated, message: "tests the deprecated set(encoding:) and decoded(_:forKey:)")
    @Test func theDeprecatedNamesKeepStoringJSONEvenForNativeTypes() throws {
        let dir = TemporaryDirectory("codable-deprecated")
        let store = try MappedKV(id: "s", directory: dir.path)
        try store.set(encoding: Int32(3), forKey: "json-int")
        #expect(try store.payload(forKey: "json-int") == Data("3".utf8).payloadBytes)
        #expect(try store.decoded(Int32.self, forKey: "json-int") == 3)
        let profile = Profile(name: "p", tags: [])
        try store.set(encoding: profile, forKey: "profile")
        #expect(try store.value(forKey: "profile", as: Profile.self) == profile, "the same JSON bytes")
    }
}
