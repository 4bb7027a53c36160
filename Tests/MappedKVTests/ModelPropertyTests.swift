import Foundation
import MappedKVFormat
import Testing

@testable import MappedKV

/// Random operation sequences against an in-memory dictionary: the store must always agree with it,
/// across reopens, compactions, growth, trims and clears, and its files must stay well-formed.
@Suite struct ModelPropertyTests {
    static let sequencesPerBlock = 125
    static let blocks = Array(0..<8)  // 8 x 125 = 1,000 sequences
    static let operationsPerSequence = 200

    enum Value {
        case bool(Bool)
        case int32(Int32)
        case uint32(UInt32)
        case int64(Int64)
        case uint64(UInt64)
        case int(Int)
        case float(Float)
        case double(Double)
        case string(String)
        case bytes([UInt8])
        case strings([String])
        case date(Date)

        func store(in store: MappedKV, key: String) throws {
            switch self {
            case .bool(let v): try store.set(v, forKey: key)
            case .int32(let v): try store.set(v, forKey: key)
            case .uint32(let v): try store.set(v, forKey: key)
            case .int64(let v): try store.set(v, forKey: key)
            case .uint64(let v): try store.set(v, forKey: key)
            case .int(let v): try store.set(v, forKey: key)
            case .float(let v): try store.set(v, forKey: key)
            case .double(let v): try store.set(v, forKey: key)
            case .string(let v): try store.set(v, forKey: key)
            case .bytes(let v): try store.set(v, forKey: key)
            case .strings(let v): try store.set(v, forKey: key)
            case .date(let v): try store.set(v, forKey: key)
            }
        }

        var payload: [UInt8] {
            switch self {
            case .bool(let v): v.payloadBytes
            case .int32(let v): v.payloadBytes
            case .uint32(let v): v.payloadBytes
            case .int64(let v): v.payloadBytes
            case .uint64(let v): v.payloadBytes
            case .int(let v): v.payloadBytes
            case .float(let v): v.payloadBytes
            case .double(let v): v.payloadBytes
            case .string(let v): v.payloadBytes
            case .bytes(let v): v.payloadBytes
            case .strings(let v): v.payloadBytes
            case .date(let v): v.timeIntervalSince1970.payloadBytes
            }
        }

        /// Reads the key back as this value's type and compares.
        func matches(in store: MappedKV, key: String) throws -> Bool {
            switch self {
            case .bool(let v): try store.bool(forKey: key) == v
            case .int32(let v): try store.int32(forKey: key) == v
            case .uint32(let v): try store.uint32(forKey: key) == v
            case .int64(let v): try store.int64(forKey: key) == v
            case .uint64(let v): try store.uint64(forKey: key) == v
            case .int(let v): try store.int(forKey: key) == v
            case .float(let v): try store.float(forKey: key).map { $0.bitPattern } == v.bitPattern
            case .double(let v): try store.double(forKey: key).map { $0.bitPattern } == v.bitPattern
            case .string(let v): try store.string(forKey: key) == v
            case .bytes(let v): try store.bytes(forKey: key) == v
            case .strings(let v): try store.strings(forKey: key) == v
            case .date(let v): try store.date(forKey: key) == v
            }
        }
    }

    static func randomString<G: RandomNumberGenerator>(_ rng: inout G, maxLength: Int) -> String {
        let alphabet = Array("abcXYZ019 _-é✓漢🙂")
        return String(
            (0..<Int.random(in: 0...maxLength, using: &rng)).map { _ in alphabet.randomElement(using: &rng)! })
    }

    static func randomValue<G: RandomNumberGenerator>(_ rng: inout G) -> Value {
        switch Int.random(in: 0..<13, using: &rng) {
        case 0: .bool(.random(using: &rng))
        case 1: .int32(.random(in: .min ... .max, using: &rng))
        case 2: .uint32(.random(in: .min ... .max, using: &rng))
        case 3: .int64(.random(in: .min ... .max, using: &rng))
        case 4: .uint64(.random(in: .min ... .max, using: &rng))
        case 5: .int(.random(in: -1000...1000, using: &rng))
        case 6: .float(Float(bitPattern: UInt32.random(in: 0...0x7F7F_FFFF, using: &rng)))
        case 7: .double(.random(in: -1e9...1e9, using: &rng))
        case 8: .string(randomString(&rng, maxLength: 40))
        case 9: .bytes((0..<Int.random(in: 0...64, using: &rng)).map { _ in UInt8.random(in: 0...255, using: &rng) })
        case 10: .strings((0..<Int.random(in: 0...4, using: &rng)).map { _ in randomString(&rng, maxLength: 8) })
        case 11: .date(Date(timeIntervalSince1970: Double(Int.random(in: 0...4_000_000_000, using: &rng))))
        default:
            // Large values force growth and compaction.
            .bytes(
                [UInt8](
                    repeating: UInt8.random(in: 0...255, using: &rng), count: Int.random(in: 257...9000, using: &rng)))
        }
    }

    @Test(arguments: blocks)
    func randomSequencesAgreeWithADictionary(block: Int) throws {
        try check(block: block, key: nil, sequences: Self.sequencesPerBlock)
    }

    /// The same workload on encrypted stores: AES-128 and AES-256, 100 sequences each.
    @Test(arguments: [(100, false), (101, true)])
    func encryptedSequencesAgreeWithADictionary(block: Int, aes256: Bool) throws {
        try check(block: block, key: CryptKey(Array("model-key-\(block)".utf8), aes256: aes256), sequences: 100)
    }

    func check(block: Int, key: CryptKey?, sequences: Int) throws {
        let configuration = Configuration(cryptKey: key)
        let dir = TemporaryDirectory("model-\(block)")
        var rng = SplitMix64(seed: 0xC0FFEE &+ UInt64(block))
        let keyPool = (0..<40).map { "key-\($0)" } + ["é", "e\u{301}", String(repeating: "L", count: 300), "🙂"]
        var reopens = 0
        var compactions = 0
        for sequence in 0..<sequences {
            let id = "seq-\(sequence)"
            var store = try MappedKV(id: id, directory: dir.path, configuration: configuration)
            var model: [String: [UInt8]] = [:]  // keyed by hex of the key's UTF-8 bytes
            var typed: [String: Value] = [:]  // keyed by hex of the key's UTF-8 bytes
            var lastSequence = try store.info().meta.sequence
            for step in 0..<Self.operationsPerSequence {
                let roll = Int.random(in: 0..<1000, using: &rng)
                let key = keyPool.randomElement(using: &rng)!
                let keyID = hex(Array(key.utf8))
                switch roll {
                case 0..<620:
                    let value = Self.randomValue(&rng)
                    try value.store(in: store, key: key)
                    model[keyID] = value.payload
                    typed[keyID] = value
                case 620..<850:
                    try store.removeValue(forKey: key)
                    model[keyID] = nil
                    typed[keyID] = nil
                case 850..<935:
                    if let value = typed[keyID] {
                        #expect(
                            try value.matches(in: store, key: key),
                            "seed block \(block) sequence \(sequence) step \(step) key \(key)")
                    } else {
                        #expect(try store.payload(forKey: key) == nil)
                    }
                case 935..<945:
                    try store.clearAll()
                    model = [:]
                    typed = [:]
                case 945..<965:
                    try store.trim()
                default:
                    store.close()
                    store = try MappedKV(id: id, directory: dir.path, configuration: configuration)
                    reopens += 1
                    let diff = differences(try contentsByKeyBytes(of: store), model)
                    #expect(
                        diff.isEmpty, "after reopen: seed block \(block) sequence \(sequence) step \(step): \(diff)")
                    if !diff.isEmpty { return }
                }
                let sequenceNow = try store.info().meta.sequence
                if sequenceNow != lastSequence { compactions += 1 }
                lastSequence = sequenceNow
            }
            let diff = differences(try contentsByKeyBytes(of: store), model)
            #expect(diff.isEmpty, "seed block \(block) sequence \(sequence): \(diff)")
            if !diff.isEmpty { return }
            #expect(try store.count == model.count)
            store.close()
            let reopened = try MappedKV(id: id, directory: dir.path, configuration: configuration)
            let reopenDiff = differences(try contentsByKeyBytes(of: reopened), model)
            #expect(reopenDiff.isEmpty, "final reopen: seed block \(block) sequence \(sequence): \(reopenDiff)")
            reopened.close()
            let problems = FileStructure.problems(directory: dir.path, id: id, key: key)
            #expect(problems.isEmpty, "seed block \(block) sequence \(sequence): \(problems)")
        }
        #expect(reopens > sequences)
        #expect(compactions > sequences)
    }
}
