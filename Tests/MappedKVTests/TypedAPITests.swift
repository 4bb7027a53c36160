import Foundation
import MappedKVFormat
import Testing

@testable import MappedKV

/// The typed API round-trips every supported type, and is safe to share between threads.
@Suite struct TypedAPITests {
    struct Settings: Codable, Equatable {
        var name: String
        var limits: [String: Int]
        var enabled: Bool
    }

    @Test func everyTypeRoundTripsAcrossReopen() throws {
        let dir = TemporaryDirectory("typed")
        let date = Date(timeIntervalSince1970: 1_700_000_000.25)
        let settings = Settings(name: "svc", limits: ["cpu": 2], enabled: true)
        do {
            let store = try MappedKV(id: "s", directory: dir.path)
            try store.set(false, forKey: "bool")
            try store.set(Int32.min, forKey: "int32")
            try store.set(UInt32.max, forKey: "uint32")
            try store.set(Int64.min, forKey: "int64")
            try store.set(UInt64.max, forKey: "uint64")
            try store.set(-5, forKey: "int")
            try store.set(Float.leastNonzeroMagnitude, forKey: "float")
            try store.set(-0.0, forKey: "double")
            try store.set("", forKey: "empty-string")
            try store.set("✓ multi\nline", forKey: "string")
            try store.set([UInt8](), forKey: "empty-bytes")
            try store.set(Data([1, 2, 3]), forKey: "data")
            try store.set(["x", "", "yz"], forKey: "strings")
            try store.set(date, forKey: "date")
            try store.set(settings, forKey: "settings")
            store.close()
        }
        let store = try MappedKV(id: "s", directory: dir.path)
        #expect(try store.bool(forKey: "bool") == false)
        #expect(try store.int32(forKey: "int32") == .min)
        #expect(try store.uint32(forKey: "uint32") == .max)
        #expect(try store.int64(forKey: "int64") == .min)
        #expect(try store.uint64(forKey: "uint64") == .max)
        #expect(try store.int(forKey: "int") == -5)
        #expect(try store.float(forKey: "float") == .leastNonzeroMagnitude)
        #expect(try store.double(forKey: "double")?.sign == .minus)
        #expect(try store.string(forKey: "empty-string") == "")
        #expect(try store.payload(forKey: "empty-string") == [0x00], "an empty string is 00, not a deletion")
        #expect(try store.string(forKey: "string") == "✓ multi\nline")
        #expect(try store.bytes(forKey: "empty-bytes") == [])
        #expect(try store.data(forKey: "data") == Data([1, 2, 3]))
        #expect(try store.strings(forKey: "strings") == ["x", "", "yz"])
        #expect(try store.date(forKey: "date") == date)
        #expect(try store.payload(forKey: "date") == date.timeIntervalSince1970.payloadBytes, "a Date is a Double")
        #expect(try store.value(forKey: "settings", as: Settings.self) == settings)
        #expect(try store.value(forKey: "missing", default: Int32(9)) == 9)
        #expect(try store.int32(forKey: "missing") == nil)
        #expect(try store.count == 15)
    }

    @Test func readingAsTheWrongTypeFollowsMMKVOrThrows() throws {
        let dir = TemporaryDirectory("types")
        let store = try MappedKV(id: "s", directory: dir.path)
        try store.set(Int32(-1), forKey: "negative")
        #expect(try store.int64(forKey: "negative") == -1, "a 10-byte int32 reads as the sign-extended int64")
        try store.set(Int64(0x1_0000_0005), forKey: "wide")
        #expect(throws: MappedKVError.self, "an int64 outside Int32's range is no int32") {
            _ = try store.int32(forKey: "wide")
        }
        try store.set(Float(1), forKey: "float")
        #expect(throws: MappedKVError.self) { _ = try store.double(forKey: "float") }
        try store.set([UInt8]([0x05, 0xFF]), forKey: "bytes")
        #expect(throws: MappedKVError.self) { _ = try store.string(forKey: "bytes") }
        // A numeric vector `03 01 ac 02` read as a string vector: the byte ac alone is not UTF-8.
        try store.set([1, 300] as [Int], forKey: "numbers")
        #expect(throws: MappedKVError.self) { _ = try store.value(forKey: "numbers", as: [String].self) }
    }

    @Test func byteExactKeys() throws {
        let dir = TemporaryDirectory("keys")
        let store = try MappedKV(id: "s", directory: dir.path)
        try store.set(1, forKey: "\u{e9}")  // é precomposed
        try store.set(2, forKey: "e\u{301}")  // é decomposed: a different MMKV key
        #expect(try store.count == 2)
        #expect(try store.int(forKey: "\u{e9}") == 1)
        #expect(try store.int(forKey: "e\u{301}") == 2)
    }

    @Test func oneInstanceIsSafeToShareBetweenThreads() async throws {
        let dir = TemporaryDirectory("threads")
        let store = try MappedKV(id: "s", directory: dir.path)
        let writers = 4
        let perWriter = 2_000
        try await withThrowingTaskGroup(of: Void.self) { group in
            for writer in 0..<writers {
                group.addTask {
                    for i in 0..<perWriter {
                        try store.set(Int64(i), forKey: "w\(writer)-\(i % 50)")
                        try store.set("last-\(i)", forKey: "w\(writer)-last")
                        if let read = try store.int64(forKey: "w\(writer)-\(i % 50)") { #expect(read == Int64(i)) }
                    }
                }
                group.addTask {
                    for _ in 0..<perWriter / 10 {
                        _ = try store.allKeys
                        _ = try store.count
                    }
                }
            }
            try await group.waitForAll()
        }
        #expect(try store.count == writers * 51)
        for writer in 0..<writers {
            #expect(try store.string(forKey: "w\(writer)-last") == "last-\(perWriter - 1)")
            #expect(try store.int64(forKey: "w\(writer)-49") == Int64(perWriter - 1))
        }
        store.close()
        #expect(try MappedKV(id: "s", directory: dir.path).count == writers * 51)
    }
}
