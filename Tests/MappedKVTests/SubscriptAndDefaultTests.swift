import Foundation
import MappedKVFormat
import Testing

@testable import MappedKV

/// `store[key]`, `store[key, default:]` and the typed getters with a default, on a store and on a
/// transaction.
@Suite struct SubscriptAndDefaultTests {
    struct Limits: Codable, Equatable { var cpu: Int }

    @Test func subscriptsReadTheTypeTheContextAsksFor() throws {
        let dir = TemporaryDirectory("subscripts")
        let store = try MappedKV(id: "s", directory: dir.path)
        try store.set(Int32(3), forKey: "retries")
        try store.set("eu-west-1", forKey: "region")
        try store.set(Limits(cpu: 2), forKey: "limits")
        try store.set(UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")!, forKey: "id")

        let retries: Int32? = try store["retries"]
        #expect(retries == 3)
        let region: String? = try store["region"]
        #expect(region == "eu-west-1")
        let limits: Limits? = try store["limits"]
        #expect(limits == Limits(cpu: 2))
        let id: UUID? = try store["id"]
        #expect(id?.uuidString == "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")
        let missing: Int64? = try store["missing"]
        #expect(missing == nil)

        #expect(try store["retries", default: Int32(9)] == 3)
        #expect(try store["missing", default: Int32(9)] == 9)
        #expect(try store["missing", default: "none"] == "none")
        #expect(try store["missing", default: Limits(cpu: 1)] == Limits(cpu: 1))
        #expect(try store["limits", default: Limits(cpu: 1)] == Limits(cpu: 2))

        // A wrong type throws rather than returning the default.
        #expect(throws: MappedKVError.self) { _ = try store["region", default: Int32(0)] }
        #expect(throws: MappedKVError.self) {
            let wrong: Double? = try store["retries"]
            _ = wrong
        }
    }

    @Test func subscriptsWorkInsideATransactionAndThroughTheProtocol() throws {
        let dir = TemporaryDirectory("subscripts-tx")
        let store = try MappedKV(id: "s", directory: dir.path)
        let next = try store.withExclusiveLock { tx in
            let current = try tx["counter", default: Int64(0)]
            try tx.set(current + 1, forKey: "counter")
            let limits: Limits? = try tx["limits"]
            #expect(limits == nil)
            return current + 1
        }
        #expect(next == 1)
        func read(_ access: some KeyValueAccess) throws -> Int64? { try access["counter"] }
        #expect(try read(store) == 1)
    }

    @Test func typedGettersWithADefault() throws {
        let dir = TemporaryDirectory("typed-defaults")
        let store = try MappedKV(id: "s", directory: dir.path)
        let date = Date(timeIntervalSince1970: 12.5)
        // Absent: every getter returns its default.
        #expect(try store.bool(forKey: "k", default: true) == true)
        #expect(try store.int32(forKey: "k", default: -1) == -1)
        #expect(try store.uint32(forKey: "k", default: 2) == 2)
        #expect(try store.int64(forKey: "k", default: -3) == -3)
        #expect(try store.uint64(forKey: "k", default: 4) == 4)
        #expect(try store.int(forKey: "k", default: 5) == 5)
        #expect(try store.float(forKey: "k", default: 0.5) == 0.5)
        #expect(try store.double(forKey: "k", default: 0.25) == 0.25)
        #expect(try store.string(forKey: "k", default: "d") == "d")
        #expect(try store.bytes(forKey: "k", default: [9]) == [9])
        #expect(try store.data(forKey: "k", default: Data([8])) == Data([8]))
        #expect(try store.strings(forKey: "k", default: ["x"]) == ["x"])
        #expect(try store.date(forKey: "k", default: date) == date)
        // Present: the stored value wins.
        try store.set(false, forKey: "bool")
        try store.set(Int32(7), forKey: "int32")
        try store.set("v", forKey: "string")
        try store.set(["a"], forKey: "strings")
        #expect(try store.bool(forKey: "bool", default: true) == false)
        #expect(try store.int32(forKey: "int32", default: 0) == 7)
        #expect(try store.string(forKey: "string", default: "d") == "v")
        #expect(try store.strings(forKey: "strings", default: []) == ["a"])
        // Present but not that type: throws, the default does not hide it.
        #expect(throws: MappedKVError.self) { _ = try store.double(forKey: "string", default: 0) }
        #expect(throws: MappedKVError.self) { _ = try store.bool(forKey: "int32", default: false) }
        // The same getters on a transaction (the protocol extension).
        let fromTransaction = try store.withExclusiveLock { tx in
            (try tx.int32(forKey: "int32", default: 0), try tx.float(forKey: "absent", default: 1.5))
        }
        #expect(fromTransaction == (7, 1.5))
    }
}
