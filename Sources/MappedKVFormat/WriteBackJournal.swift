/// The redo record of a full write-back (MappedKV's own file, `<id>.writeback`; MMKV never sees it).
///
/// MMKV rewrites the data region in place, so a process killed during a write-back leaves a region
/// that matches neither the old meta nor the new one. MappedKV first writes this record (the new
/// region as stored, the new data file size and the whole new meta), then marks the meta by setting
/// its sequence to ``markerSequence``, then rewrites the region, then stores the new meta with the
/// sequence last. Whoever finds a complete journal while the meta carries the marker sequence and
/// the region does not validate finishes the write-back from it.
///
/// Layout (little-endian): magic `MKVWB001`, base sequence u32, base CRC u32, base size u32,
/// file size u64, the 112-byte new meta, region length u32, the region, then a CRC-32 of all
/// preceding bytes.
package struct WriteBackJournal: Equatable, Sendable {
    /// The first 8 bytes of every journal.
    package static let magic: [UInt8] = Array("MKVWB001".utf8)
    /// The bytes around the region: magic, base stamp, file size, meta, region length, trailing CRC.
    package static let overhead = 8 + 12 + 8 + MetaInfo.size + 4 + 4

    /// The stamp of the meta the write-back replaces.
    package var base: MetaStamp
    /// The data file's size after the write-back.
    package var fileSize: UInt64
    /// The meta after the write-back.
    package var meta: MetaInfo
    /// The new data region exactly as stored (encrypted for an encrypted store).
    package var region: [UInt8]

    /// A journal for a write-back from `base` to `meta`.
    package init(base: MetaStamp, fileSize: UInt64, meta: MetaInfo, region: [UInt8]) {
        self.base = base
        self.fileSize = fileSize
        self.meta = meta
        self.region = region
    }

    /// The sequence stored in the meta while the region is being rewritten.
    package var markerSequence: UInt32 { base.sequence &+ 1 }

    /// The stored form.
    package var serialized: [UInt8] {
        var bytes = Self.magic
        bytes.reserveCapacity(Self.overhead + region.count)
        func put32(_ value: UInt32) { withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) } }
        put32(base.sequence)
        put32(base.crcDigest)
        put32(base.actualSize)
        withUnsafeBytes(of: fileSize.littleEndian) { bytes.append(contentsOf: $0) }
        bytes.append(contentsOf: meta.serialized)
        put32(UInt32(region.count))
        bytes.append(contentsOf: region)
        put32(bytes.withUnsafeBytes { CRC32.update(0, $0) })
        return bytes
    }

    /// Parses a stored journal; nil if it is incomplete or damaged (a write that never finished).
    package init?(parsing bytes: [UInt8]) {
        guard bytes.count >= Self.overhead, bytes.starts(with: Self.magic) else { return nil }
        let parsed: WriteBackJournal? = bytes.withUnsafeBytes { raw in
            func u32(_ offset: Int) -> UInt32 {
                UInt32(littleEndian: raw.loadUnaligned(fromByteOffset: offset, as: UInt32.self))
            }
            let regionLength = Int(u32(8 + 12 + 8 + MetaInfo.size))
            guard bytes.count == Self.overhead + regionLength else { return nil }
            let body = UnsafeRawBufferPointer(rebasing: raw[0..<(bytes.count - 4)])
            guard CRC32.update(0, body) == u32(bytes.count - 4) else { return nil }
            guard let meta = try? MetaInfo(parsing: UnsafeRawBufferPointer(rebasing: raw[28..<(28 + MetaInfo.size)]))
            else {
                return nil
            }
            let regionStart = 28 + MetaInfo.size + 4
            // A data file too short for the region is no write-back a writer makes: torn.
            let fileSize = UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: 20, as: UInt64.self))
            guard fileSize >= UInt64(4 + regionLength) else { return nil }
            return WriteBackJournal(
                base: MetaStamp(sequence: u32(8), crcDigest: u32(12), actualSize: u32(16)),
                fileSize: fileSize,
                meta: meta,
                region: Array(raw[regionStart..<(regionStart + regionLength)]))
        }
        guard let parsed else { return nil }
        self = parsed
    }
}
