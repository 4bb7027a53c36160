import Foundation
import Testing

@testable import MappedKV

/// Random writes against a plain dictionary, with the index file damaged between opens in every
/// way a disk, a crash or a person can: a flipped byte, a cut, a deletion, zeros, another store's
/// file, an old copy of its own. Every open must read exactly the model; the failing seed is printed.
@Suite("Index file damage")
struct IndexFileDamageTests {
    enum Damage: CaseIterable {
        case flipByte, truncate, delete, zero, foreign, oldCopy, none
    }

    @Test("no damage to the index file ever changes what an open reads", arguments: 1...12)
    func randomDamage(seed: UInt64) throws {
        let dir = TemporaryDirectory("index-damage-\(seed)")
        var random = SplitMix64(seed: seed)
        var model: [String: Int64] = [:]
        // A second store, for a foreign but well-formed file.
        let other = try MappedKV(id: "t", directory: dir.path)
        for i in 0..<300 { try other.set(Int64(i), forKey: "k\(i)") }
        other.close()
        var oldCopy: [UInt8]?
        for round in 0..<8 {
            let usesIndex = round % 3 != 2
            let store = try MappedKV(
                id: "s", directory: dir.path, configuration: Configuration(usesIndexFile: usesIndex))
            try IndexFileTests.expectMatches(store, model, "seed \(seed) round \(round) open")
            let writes = Int(random.next() % 600) + 1
            for _ in 0..<writes {
                let key = "k\(random.next() % 400)"
                switch random.next() % 10 {
                case 0:
                    try store.removeValue(forKey: key)
                    model[key] = nil
                case 1 where random.next() % 20 == 0: try store.trim()
                default:
                    let value = Int64(bitPattern: random.next())
                    try store.set(value, forKey: key)
                    model[key] = value
                }
            }
            store.close()
            let path = dir.file("s.index")
            if oldCopy == nil || random.next() % 3 == 0 { oldCopy = fileBytes(path) }
            let damage = Damage.allCases[Int(random.next() % UInt64(Damage.allCases.count))]
            try Self.apply(damage, to: path, foreign: dir.file("t.index"), oldCopy: oldCopy, random: &random)
            let reopened = try MappedKV(id: "s", directory: dir.path)
            try IndexFileTests.expectMatches(reopened, model, "seed \(seed) round \(round) after \(damage)")
            reopened.close()
        }
    }

    static func apply(
        _ damage: Damage, to path: String, foreign: String, oldCopy: [UInt8]?, random: inout SplitMix64
    ) throws {
        guard var bytes = fileBytes(path) else { return }
        switch damage {
        case .flipByte:
            let position = Int(random.next() % UInt64(bytes.count))
            bytes[position] ^= UInt8(1 << (random.next() % 8))
            try writeFile(path, bytes)
        case .truncate:
            try writeFile(path, Array(bytes.prefix(Int(random.next() % UInt64(bytes.count)))))
        case .delete:
            try FileManager.default.removeItem(atPath: path)
        case .zero:
            try writeFile(path, [UInt8](repeating: 0, count: bytes.count))
        case .foreign:
            if let other = fileBytes(foreign) { try writeFile(path, other) }
        case .oldCopy:
            if let oldCopy { try writeFile(path, oldCopy) }
        case .none:
            break
        }
    }
}
