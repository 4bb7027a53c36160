// `values(forKeys:as:)` against single gets and a plain model.
//
// Invariant: for any store state (values replaced, removed, expired; repeated, absent and non-ASCII
// keys; groups shorter and longer than the read-ahead group), a batched read returns exactly what a
// `value(forKey:as:)` of each key returns, in order.

import Foundation
import MappedKVFormat
import Testing

@testable import MappedKV

@Suite struct BatchedReadTests {
    @Test("a batched read equals one get per key, for random stores and key lists", arguments: [false, true])
    func randomStoresAgreeWithSingleGets(encrypted: Bool) throws {
        let seed: UInt64 = encrypted ? 0xBA7C_4ED1 : 0xBA7C_4ED0
        var random = SplitMix64(seed: seed)
        let dir = TemporaryDirectory("batched-read")
        let clock = ManualClock(1_700_000_000)
        let store = try MappedKV(
            id: "s", directory: dir.path,
            configuration: Configuration(
                cryptKey: encrypted ? CryptKey(Array("batched".utf8)) : nil, clock: clock.expiryClock))
        defer { store.close() }
        try store.enableKeyExpiry()
        let names = (0..<300).map { $0 % 7 == 0 ? "ключ-\($0)" : "k\($0)" }
        var model: [String: Int64] = [:]
        var expiring: [String: UInt32] = [:]
        for step in 0..<3_000 {
            let key = names[Int.random(in: 0..<names.count, using: &random)]
            switch Int.random(in: 0..<10, using: &random) {
            case 0..<6:
                try store.set(Int64(step), forKey: key)
                model[key] = Int64(step)
                expiring[key] = nil
            case 6:
                try store.set(Int64(step), forKey: key, expiresAfter: .seconds(5))
                model[key] = Int64(step)
                expiring[key] = clock.now + 5
            case 7:
                try store.removeValue(forKey: key)
                model[key] = nil
            case 8:
                clock.advance(1)
            default:
                let count = [0, 1, 2, 63, 64, 65, 200][Int.random(in: 0..<7, using: &random)]
                let keys = (0..<count).map { _ in
                    Int.random(in: 0..<8, using: &random) == 0
                        ? "absent-\(Int.random(in: 0..<50, using: &random))"
                        : names[Int.random(in: 0..<names.count, using: &random)]
                }
                let batched = try store.values(forKeys: keys, as: Int64.self)
                let single = try keys.map { key throws(MappedKVError) in try store.value(forKey: key, as: Int64.self) }
                let expected = keys.map { key -> Int64? in
                    if let expiry = expiring[key], expiry <= clock.now { return nil }
                    return model[key]
                }
                #expect(batched == single, "seed \(seed), step \(step): the batched read differs from single gets")
                #expect(batched == expected, "seed \(seed), step \(step): the batched read differs from the model")
                if batched != expected { return }
            }
        }
    }

    @Test("a value that does not decode fails the whole call, naming its key")
    func aMismatchedTypeNamesItsKey() throws {
        let dir = TemporaryDirectory("batched-read-type")
        let store = try MappedKV(id: "s", directory: dir.path)
        defer { store.close() }
        try store.set(1.5, forKey: "a")
        try store.set("abc", forKey: "b")
        #expect(try store.values(forKeys: ["a"], as: Double.self) == [1.5])
        #expect(throws: MappedKVError.self) { try store.values(forKeys: ["a", "b"], as: Double.self) }
        do {
            _ = try store.values(forKeys: ["a", "b", "c"], as: Double.self)
        } catch {
            guard case .valueDecodingFailed(let key, _, _) = error else {
                Issue.record("unexpected error \(error)")
                return
            }
            #expect(key == "b")
        }
    }

    @Test("a closed handle refuses a batched read")
    func aClosedHandleRefuses() throws {
        let dir = TemporaryDirectory("batched-read-closed")
        let store = try MappedKV(id: "s", directory: dir.path)
        store.close()
        #expect(throws: MappedKVError.self) { try store.values(forKeys: ["a"], as: Int32.self) }
    }
}
