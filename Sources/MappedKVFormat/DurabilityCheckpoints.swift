/// The checkpoints MappedKV keeps in the meta file's first sector, past MMKV's 112-byte struct
/// (docs/FORMAT.md 3.5): the last durability point, and a ring of the most recent states the
/// writers committed.
///
/// A power loss can leave the meta's sector newer than the data sectors it describes. The meta's
/// own CRC then matches nothing on disk; these checkpoints are the other (size, CRC) pairs a
/// recovery can hold the data against, so that it keeps the longest prefix something vouches for
/// rather than the last full write-back. MMKV reads and writes only the first 112 bytes, from its
/// own memory, so it never disturbs them; an MMKV writer does not add to them either, which only
/// leaves a recovery fewer candidates.
///
/// Layout, all integers little-endian, every field an aligned 4-byte store:
///
/// | Offset | Size | Field |
/// |---|---|---|
/// | 112 | 4 | magic `MKVc` |
/// | 116 | 4 | entries written so far (the next slot is this modulo ``slotCount``) |
/// | 120 | 16 | the durability point: a ``Checkpoint`` |
/// | 136 | 16 × 23 | the ring of recent checkpoints |
///
/// Everything lies in bytes 0 to 511, one 512-byte sector, which a disk writes whole: a power loss
/// leaves the struct and its checkpoints from the same moment.
package enum DurabilityCheckpoints {
    /// A state of the data region: its used size and the CRC over it as stored, with the meta's
    /// sequence at the time (for reports; a recovery holds only the size and CRC against the data).
    package struct Checkpoint: Equatable, Hashable, Sendable, CustomStringConvertible {
        package var actualSize: UInt32
        package var crcDigest: UInt32
        package var sequence: UInt32

        /// The state a meta stamp describes.
        @inlinable
        package init(_ stamp: MetaStamp) {
            self.init(actualSize: stamp.actualSize, crcDigest: stamp.crcDigest, sequence: stamp.sequence)
        }

        @inlinable
        package init(actualSize: UInt32, crcDigest: UInt32, sequence: UInt32) {
            self.actualSize = actualSize
            self.crcDigest = crcDigest
            self.sequence = sequence
        }

        /// The check word stored after the fields: a checkpoint cut short by a killed writer, or
        /// bytes that never held one, fail it.
        @inlinable
        package var check: UInt32 {
            let crc = crcDigest &* 0x85EB_CA77
            let sequence = sequence &* 0xC2B2_AE3D
            var mixed = actualSize &* 0x9E37_79B1
            mixed ^= (crc << 13) | (crc >> 19)
            mixed ^= (sequence << 7) | (sequence >> 25)
            return mixed ^ 0x27D4_EB2F
        }

        /// The size, the CRC in hexadecimal and the sequence, e.g. `size 4 crc 0x0 seq 1`.
        package var description: String {
            "size \(actualSize) crc 0x\(String(crcDigest, radix: 16)) seq \(sequence)"
        }
    }

    // The layout's numbers are inlinable computed properties rather than stored ones, so that
    // ``add(_:to:)``, inlined into every append, folds them to constants.

    /// `MKVc`, read as a little-endian u32.
    @inlinable package static var magic: UInt32 { 0x6356_4B4D }
    /// The ring's slots.
    @inlinable package static var slotCount: Int { 23 }
    /// The bytes a checkpoint takes: size, CRC, sequence and check word.
    @inlinable package static var checkpointSize: Int { 16 }

    /// Byte offsets in the meta file.
    package enum Offset {
        @inlinable package static var magic: Int { 112 }
        @inlinable package static var written: Int { 116 }
        @inlinable package static var durable: Int { 120 }
        @inlinable package static var ring: Int { 136 }
    }

    /// The end of the last slot; the meta file must be at least this long to hold them.
    @inlinable package static var end: Int { Offset.ring + slotCount * checkpointSize }

    /// What a meta file's checkpoints hold: nil if it has none (an MMKV store, a store older than
    /// them, or a meta file too short).
    package struct Contents: Equatable, Sendable {
        /// The last durability point, if one was recorded and its check word holds.
        package var durable: Checkpoint?
        /// The ring's checkpoints whose check word holds, oldest first.
        package var recent: [Checkpoint]
        /// How many checkpoints were ever added to the ring.
        package var written: UInt32
    }

    /// Whether `meta` (the meta file's bytes) carries checkpoints.
    package static func isPresent(in meta: UnsafeRawBufferPointer) -> Bool {
        meta.count >= end && load(meta, Offset.magic) == magic
    }

    /// Reads the checkpoints of a meta file, or nil if it has none.
    package static func read(_ meta: UnsafeRawBufferPointer) -> Contents? {
        guard isPresent(in: meta) else { return nil }
        let written = load(meta, Offset.written)
        var recent: [Checkpoint] = []
        // Oldest first: from the slot after the newest, round the ring.
        for step in 0..<slotCount {
            let slot = (Int(written % UInt32(slotCount)) + step) % slotCount
            if let checkpoint = checkpoint(in: meta, at: Offset.ring + slot * checkpointSize) {
                recent.append(checkpoint)
            }
        }
        return Contents(durable: checkpoint(in: meta, at: Offset.durable), recent: recent, written: written)
    }

    /// Lays out empty checkpoints with `durable` as the durability point, over whatever bytes
    /// 112 to ``end`` held.
    package static func initialize(_ meta: UnsafeMutableRawBufferPointer, durable: Checkpoint) {
        precondition(meta.count >= end, "meta file too short for checkpoints")
        for offset in stride(from: Offset.ring, to: end, by: 4) { store(meta, 0, offset) }
        store(meta, 0, Offset.written)
        write(durable, into: meta, at: Offset.durable)
        store(meta, magic, Offset.magic)
    }

    /// Adds `checkpoint` to the ring, over its oldest slot. Does nothing where there are no checkpoints.
    ///
    /// Every append calls it: inlined, it is a few loads and stores into the meta page the append
    /// dirties anyway (`mappedkv bench`'s set workloads show the cost).
    @inlinable
    package static func add(_ checkpoint: Checkpoint, to meta: UnsafeMutableRawBufferPointer) {
        guard meta.count >= end, let base = meta.baseAddress,
            UInt32(littleEndian: base.loadUnaligned(fromByteOffset: Offset.magic, as: UInt32.self)) == magic
        else { return }
        let written = UInt32(littleEndian: base.loadUnaligned(fromByteOffset: Offset.written, as: UInt32.self))
        let slot = base + Offset.ring + Int(written % UInt32(slotCount)) * checkpointSize
        // The fields first and the check word last (see ``write(_:into:at:)``).
        slot.storeBytes(of: checkpoint.actualSize.littleEndian, toByteOffset: 0, as: UInt32.self)
        slot.storeBytes(of: checkpoint.crcDigest.littleEndian, toByteOffset: 4, as: UInt32.self)
        slot.storeBytes(of: checkpoint.sequence.littleEndian, toByteOffset: 8, as: UInt32.self)
        slot.storeBytes(of: checkpoint.check.littleEndian, toByteOffset: 12, as: UInt32.self)
        base.storeBytes(of: (written &+ 1).littleEndian, toByteOffset: Offset.written, as: UInt32.self)
    }

    /// The offset of the slot the newest checkpoint went to (for recording what ``add(_:to:)`` stored).
    package static func newestSlotOffset(in meta: UnsafeRawBufferPointer) -> Int? {
        guard isPresent(in: meta) else { return nil }
        let written = load(meta, Offset.written)
        guard written > 0 else { return nil }
        return Offset.ring + Int((written &- 1) % UInt32(slotCount)) * checkpointSize
    }

    /// Records `checkpoint` as the durability point. Does nothing where there are no checkpoints.
    package static func setDurable(_ checkpoint: Checkpoint, in meta: UnsafeMutableRawBufferPointer) {
        guard isPresent(in: UnsafeRawBufferPointer(meta)) else { return }
        write(checkpoint, into: meta, at: Offset.durable)
    }

    /// The 16 stored bytes of `checkpoint`.
    package static func serialized(_ checkpoint: Checkpoint) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: checkpointSize)
        bytes.withUnsafeMutableBytes { write(checkpoint, into: $0, at: 0) }
        return bytes
    }

    static func checkpoint(in meta: UnsafeRawBufferPointer, at offset: Int) -> Checkpoint? {
        let checkpoint = Checkpoint(
            actualSize: load(meta, offset), crcDigest: load(meta, offset + 4), sequence: load(meta, offset + 8))
        return load(meta, offset + 12) == checkpoint.check ? checkpoint : nil
    }

    // The fields first and the check word last, so that a writer killed halfway leaves a slot
    // that fails its check rather than one that mixes two checkpoints.
    static func write(_ checkpoint: Checkpoint, into meta: UnsafeMutableRawBufferPointer, at offset: Int) {
        store(meta, checkpoint.actualSize, offset)
        store(meta, checkpoint.crcDigest, offset + 4)
        store(meta, checkpoint.sequence, offset + 8)
        store(meta, checkpoint.check, offset + 12)
    }

    static func load(_ meta: UnsafeRawBufferPointer, _ offset: Int) -> UInt32 {
        UInt32(littleEndian: meta.loadUnaligned(fromByteOffset: offset, as: UInt32.self))
    }

    static func store(_ meta: UnsafeMutableRawBufferPointer, _ value: UInt32, _ offset: Int) {
        meta.storeBytes(of: value.littleEndian, toByteOffset: offset, as: UInt32.self)
    }
}
