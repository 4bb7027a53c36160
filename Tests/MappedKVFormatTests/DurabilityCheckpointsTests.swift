import Testing

@testable import MappedKVFormat

/// The checkpoints in the meta file's first sector (docs/FORMAT.md 3.5).
@Suite struct DurabilityCheckpointsTests {
    typealias Checkpoint = DurabilityCheckpoints.Checkpoint

    func checkpoint(_ n: UInt32) -> Checkpoint {
        Checkpoint(actualSize: n * 10, crcDigest: n &* 0x1234_5679, sequence: n / 7)
    }

    @Test("a meta without them (zeros past the struct, or too short) has none, and adding does nothing")
    func absent() {
        var meta = [UInt8](repeating: 0, count: 4096)
        meta.withUnsafeMutableBytes { DurabilityCheckpoints.add(checkpoint(1), to: $0) }
        #expect(meta.allSatisfy { $0 == 0 })
        #expect(meta.withUnsafeBytes { DurabilityCheckpoints.read($0) } == nil)
        #expect([UInt8](repeating: 0, count: 300).withUnsafeBytes { DurabilityCheckpoints.read($0) } == nil)
    }

    @Test("laid out, they hold the durability point and the last 23 checkpoints, oldest first, in bytes 112 to 503")
    func ring() {
        var meta = [UInt8](repeating: 0xEE, count: 4096)
        let struct112 = Array(meta[0..<112])
        meta.withUnsafeMutableBytes { DurabilityCheckpoints.initialize($0, durable: checkpoint(0)) }
        for n in 1...30 { meta.withUnsafeMutableBytes { DurabilityCheckpoints.add(checkpoint(UInt32(n)), to: $0) } }
        let contents = meta.withUnsafeBytes { DurabilityCheckpoints.read($0) }
        #expect(contents?.durable == checkpoint(0))
        #expect(contents?.recent == (8...30).map { checkpoint(UInt32($0)) })
        #expect(contents?.written == 30)
        #expect(Array(meta[0..<112]) == struct112, "MMKV's struct is untouched")
        #expect(meta[504...].allSatisfy { $0 == 0xEE }, "nothing past the first sector's checkpoints")
        #expect(Array(meta[112..<116]) == Array("MKVc".utf8))
        meta.withUnsafeMutableBytes { DurabilityCheckpoints.setDurable(checkpoint(30), in: $0) }
        #expect(meta.withUnsafeBytes { DurabilityCheckpoints.read($0) }?.durable == checkpoint(30))
    }

    @Test("a slot cut short by a killed writer fails its check and is left out")
    func tornSlot() {
        var meta = [UInt8](repeating: 0, count: 4096)
        meta.withUnsafeMutableBytes { DurabilityCheckpoints.initialize($0, durable: checkpoint(0)) }
        for n in 1...3 { meta.withUnsafeMutableBytes { DurabilityCheckpoints.add(checkpoint(UInt32(n)), to: $0) } }
        let slot = DurabilityCheckpoints.Offset.ring + DurabilityCheckpoints.checkpointSize  // the second
        meta[slot] ^= 0x40
        #expect(meta.withUnsafeBytes { DurabilityCheckpoints.read($0) }?.recent == [checkpoint(1), checkpoint(3)])
        #expect(DurabilityCheckpoints.serialized(checkpoint(2)).count == 16)
    }
}
