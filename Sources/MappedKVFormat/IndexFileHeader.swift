/// The header of a store's index file, `<data file>.index` (docs/FORMAT.md section 12): what the
/// snapshot of the key index after it describes, and the checks that decide whether an open may
/// use it instead of decoding the log.
///
/// The index file is derived data, written by MappedKV only; MMKV never reads it. Every field is
/// little-endian. The header's own CRC covers bytes 12 to 128 and the buckets' CRC covers every
/// bucket, so a torn or damaged file is told from a good one before any bucket is used.
package struct IndexFileHeader: Equatable, Sendable {
    /// `MKVI`.
    package static let magic: UInt32 = 0x4956_4B4D
    /// The layout and the key hash this version of the code reads and writes: a change to either
    /// is a new version, and a file of another version is rebuilt, never read.
    package static let currentVersion: UInt32 = 1
    /// The bytes the header occupies.
    package static let size = 144
    /// Where the buckets start: one page in, so that the buckets could be mapped on their own.
    package static let bucketsOffset = 4096
    /// The bytes of one bucket: a 4-byte tag (31 hash bits, and the repaired-key flag on top) and
    /// a 4-byte location (where the record starts in the region, plus one; zero when empty).
    package static let bucketSize = 8

    /// Bit 0: every value carries the expiry suffix. Bit 1: the store is encrypted, so the hash
    /// seed is stored masked with a value derived from its key.
    package struct Flags: OptionSet, Sendable, Equatable {
        package let rawValue: UInt32
        package init(rawValue: UInt32) { self.rawValue = rawValue }
        package static let keyExpiry = Flags(rawValue: 1 << 0)
        package static let encrypted = Flags(rawValue: 1 << 1)
    }

    package var version: UInt32 = IndexFileHeader.currentVersion
    package var flags: Flags = []
    /// The boot the writer ran in (the 16 bytes of Linux's boot ID); all zero when unknown.
    package var bootID: [UInt8] = Array(repeating: 0, count: 16)
    /// The data file's device and inode numbers when the file was written.
    package var dataDevice: UInt64 = 0
    package var dataInode: UInt64 = 0
    /// The log state the buckets describe: the meta's sequence, CRC and size.
    package var stamp = MetaStamp(sequence: 0, crcDigest: 0, actualSize: 0)
    /// The data file's 4-byte header at that state.
    package var dataHeader: UInt32 = 0
    /// The key hash's seed; for an encrypted store, the seed XOR a mask derived from its key.
    package var seed: UInt64 = 0
    /// For an encrypted store, a value derived from its key that tells a wrong key (zero otherwise).
    package var keyCheck: UInt64 = 0
    /// The number of buckets: zero or a power of two.
    package var bucketCount: UInt64 = 0
    /// The live keys, the keys that are not UTF-8 among them, and the bytes of their records.
    package var keyCount: UInt64 = 0
    package var repairedKeyCount: UInt64 = 0
    package var recordBytes: UInt64 = 0
    /// The records in the region, deletions included.
    package var recordCount: UInt64 = 0
    /// The CRC-32 of the bucket bytes.
    package var bucketsCRC: UInt32 = 0
    /// When the data file last changed, as the writer saw it (nanoseconds since 1970; zero when
    /// unknown), and the CRC-32 of the meta file's first 112 bytes (MMKV's struct) then: a change
    /// to either since, with the log's state unchanged, means the files were written outside the
    /// store's protocol (by hand, by a tool) and must be checked again. The meta's durability
    /// checkpoints after the struct change at every flush and are left out.
    package var dataModified: UInt64 = 0
    package var metaStructCRC: UInt32 = 0

    package init() {}

    /// The bytes of bucket pages a page CRC covers: a store reading through its mappings checks
    /// each page of buckets the first time it probes it, not the whole table at open.
    package static let bucketPageSize = 4096

    /// The number of bucket pages (the last may be short).
    package var bucketPageCount: Int {
        (Int(bucketCount) * Self.bucketSize + Self.bucketPageSize - 1) / Self.bucketPageSize
    }

    /// Where the page CRCs start: after the buckets, one 4-byte CRC-32 per bucket page.
    package var pageCRCsOffset: Int { Self.bucketsOffset + Int(bucketCount) * Self.bucketSize }

    /// The bytes of the whole file: the header, zeros to ``bucketsOffset``, the buckets, then
    /// the CRC of each page of buckets.
    package var fileSize: Int { pageCRCsOffset + bucketPageCount * 4 }

    /// The 144 header bytes, with the header CRC filled in.
    package func serialized() -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: Self.size)
        func put<T: FixedWidthInteger>(_ value: T, at offset: Int) {
            withUnsafeBytes(of: value.littleEndian) { source in
                for index in 0..<source.count { bytes[offset + index] = source[index] }
            }
        }
        put(Self.magic, at: 0)
        put(version, at: 4)
        put(flags.rawValue, at: 12)
        for index in 0..<16 { bytes[16 + index] = index < bootID.count ? bootID[index] : 0 }
        put(dataDevice, at: 32)
        put(dataInode, at: 40)
        put(stamp.sequence, at: 48)
        put(stamp.crcDigest, at: 52)
        put(stamp.actualSize, at: 56)
        put(dataHeader, at: 60)
        put(seed, at: 64)
        put(keyCheck, at: 72)
        put(bucketCount, at: 80)
        put(keyCount, at: 88)
        put(repairedKeyCount, at: 96)
        put(recordBytes, at: 104)
        put(recordCount, at: 112)
        put(bucketsCRC, at: 120)
        put(dataModified, at: 128)
        put(metaStructCRC, at: 136)
        put(CRC32.checksum(bytes[12..<Self.size]), at: 8)
        return bytes
    }

    /// Why a file's header is not one this code reads.
    package enum Rejection: Error, Equatable, CustomStringConvertible {
        case tooShort(Int)
        case badMagic
        case otherVersion(UInt32)
        case headerCRC
        case bucketCount(UInt64)

        package var description: String {
            switch self {
            case .tooShort(let count): "the file is \(count) bytes, shorter than its header"
            case .badMagic: "the file does not start with MKVI"
            case .otherVersion(let version): "the file is version \(version), not \(IndexFileHeader.currentVersion)"
            case .headerCRC: "the header's CRC does not match"
            case .bucketCount(let count): "the bucket count \(count) is not zero or a power of two"
            }
        }
    }

    /// Parses the first 144 bytes of `bytes`, checking the magic, the version, the header CRC
    /// and the bucket count (the file's length against it is the reader's check).
    package init(parsing bytes: UnsafeRawBufferPointer) throws(Rejection) {
        guard bytes.count >= Self.size else { throw .tooShort(bytes.count) }
        func get<T: FixedWidthInteger>(_: T.Type, at offset: Int) -> T {
            T(littleEndian: bytes.loadUnaligned(fromByteOffset: offset, as: T.self))
        }
        guard get(UInt32.self, at: 0) == Self.magic else { throw .badMagic }
        let version = get(UInt32.self, at: 4)
        guard version == Self.currentVersion else { throw .otherVersion(version) }
        guard get(UInt32.self, at: 8) == CRC32.update(0, UnsafeRawBufferPointer(rebasing: bytes[12..<Self.size])) else {
            throw .headerCRC
        }
        self.version = version
        flags = Flags(rawValue: get(UInt32.self, at: 12))
        bootID = Array(bytes[16..<32])
        dataDevice = get(UInt64.self, at: 32)
        dataInode = get(UInt64.self, at: 40)
        stamp = MetaStamp(
            sequence: get(UInt32.self, at: 48), crcDigest: get(UInt32.self, at: 52),
            actualSize: get(UInt32.self, at: 56))
        dataHeader = get(UInt32.self, at: 60)
        seed = get(UInt64.self, at: 64)
        keyCheck = get(UInt64.self, at: 72)
        bucketCount = get(UInt64.self, at: 80)
        guard bucketCount == 0 || (bucketCount.nonzeroBitCount == 1 && bucketCount <= 1 << 32) else {
            throw .bucketCount(bucketCount)
        }
        keyCount = get(UInt64.self, at: 88)
        repairedKeyCount = get(UInt64.self, at: 96)
        recordBytes = get(UInt64.self, at: 104)
        recordCount = get(UInt64.self, at: 112)
        bucketsCRC = get(UInt32.self, at: 120)
        dataModified = get(UInt64.self, at: 128)
        metaStructCRC = get(UInt32.self, at: 136)
    }
}
