/// The 16-byte AES-CFB initialization vector stored in the meta file.
package struct InitializationVector: Equatable, Hashable, Sendable {
    /// The vector's bytes.
    package var bytes: [UInt8]

    /// The all-zero vector of a fresh meta file.
    package static let zero = InitializationVector(unchecked: [UInt8](repeating: 0, count: 16))

    /// Creates a vector from exactly 16 bytes, or nil for any other length.
    package init?(_ bytes: [UInt8]) {
        guard bytes.count == 16 else { return nil }
        self.bytes = bytes
    }

    init(unchecked bytes: [UInt8]) { self.bytes = bytes }
}

/// The format level recorded in the meta file (`MMKVVersion`, docs/FORMAT.md section 3.2).
package struct MetaVersion: RawRepresentable, Comparable, Hashable, Sendable, CustomStringConvertible {
    /// The stored number.
    package var rawValue: UInt32
    /// Creates a version from its stored number.
    package init(rawValue: UInt32) { self.rawValue = rawValue }

    /// A fresh or zeroed meta: the actual size comes from the data file's header.
    package static let `default` = MetaVersion(rawValue: 0)
    /// The sequence is maintained.
    package static let sequence = MetaVersion(rawValue: 1)
    /// The IV field holds a random IV.
    package static let randomIV = MetaVersion(rawValue: 2)
    /// `actualSize` and `lastConfirmed` are authoritative.
    package static let actualSize = MetaVersion(rawValue: 3)
    /// `flags` is valid. Every MMKV 2.4.2 write raises the version to at least this.
    package static let flag = MetaVersion(rawValue: 4)
    /// The first value MMKV treats as invalid.
    package static let firstInvalid = MetaVersion(rawValue: 7)

    /// Versions are ordered by their number.
    package static func < (lhs: MetaVersion, rhs: MetaVersion) -> Bool { lhs.rawValue < rhs.rawValue }
    /// The version number.
    package var description: String { String(rawValue) }
}

/// Bits of the meta file's `flags` field.
package struct MetaFlags: OptionSet, Hashable, Sendable {
    /// The stored bits.
    package var rawValue: UInt64
    /// Creates flags from stored bits.
    package init(rawValue: UInt64) { self.rawValue = rawValue }
    /// Every value carries a 4-byte expiry time (`EnableKeyExipre`).
    package static let keyExpiry = MetaFlags(rawValue: 1)
}

/// The 112-byte `MMKVMetaInfo` struct at offset 0 of the `.crc` file (docs/FORMAT.md section 3).
///
/// All integers are little-endian. The struct is parsed and serialized field by field; it never
/// depends on the host's struct layout.
@usableFromInline
package struct MetaInfo: Equatable, Sendable {
    /// The size of the struct in the file.
    @usableFromInline package static let size = 112

    /// Byte offsets of the fields.
    @usableFromInline
    package enum Offset {
        /// `m_crcDigest`, u32.
        @usableFromInline package static let crcDigest = 0
        /// `m_version`, u32.
        package static let version = 4
        /// `m_sequence`, u32.
        @usableFromInline package static let sequence = 8
        /// `m_vector`, 16 bytes.
        package static let iv = 12
        /// `m_actualSize`, u32.
        @usableFromInline package static let actualSize = 28
        /// `lastConfirmed.lastActualSize`, u32.
        package static let lastConfirmedActualSize = 32
        /// `lastConfirmed.lastCRCDigest`, u32.
        package static let lastConfirmedCRC = 36
        /// `lastConfirmed._reserved`, 64 bytes.
        package static let reserved = 40
        /// `m_flags`, u64.
        package static let flags = 104
    }

    /// CRC-32 of the data region `[4, 4 + actualSize)`, over ciphertext if encrypted.
    package var crcDigest: UInt32 = 0
    /// The stored format level.
    package var version: MetaVersion = .default
    /// The count of full write-backs, clears and other whole-file changes.
    package var sequence: UInt32 = 0
    /// The AES-CFB IV, valid when the version is at least ``MetaVersion/randomIV``.
    package var iv: InitializationVector = .zero
    /// Bytes used in the data region, authoritative from ``MetaVersion/actualSize``.
    package var actualSize: UInt32 = 0
    /// `actualSize` at the last sequence increment.
    package var lastConfirmedActualSize: UInt32 = 0
    /// The CRC at the last sequence increment.
    package var lastConfirmedCRC: UInt32 = 0
    /// Reserved bytes, kept as found.
    package var reserved: [UInt8] = [UInt8](repeating: 0, count: 64)
    /// Flag bits, meaningful from ``MetaVersion/flag``.
    package var flags: MetaFlags = []

    /// The all-zero meta of a brand-new file.
    package init() {}

    /// Parses the first 112 bytes of `bytes`.
    package init(parsing bytes: UnsafeRawBufferPointer) throws(FormatError) {
        guard bytes.count >= Self.size else { throw .metaTooShort(length: bytes.count) }
        func u32(_ offset: Int) -> UInt32 {
            UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: offset, as: UInt32.self))
        }
        crcDigest = u32(Offset.crcDigest)
        version = MetaVersion(rawValue: u32(Offset.version))
        sequence = u32(Offset.sequence)
        iv = InitializationVector(unchecked: Array(bytes[Offset.iv..<(Offset.iv + 16)]))
        actualSize = u32(Offset.actualSize)
        lastConfirmedActualSize = u32(Offset.lastConfirmedActualSize)
        lastConfirmedCRC = u32(Offset.lastConfirmedCRC)
        reserved = Array(bytes[Offset.reserved..<(Offset.reserved + 64)])
        flags = MetaFlags(
            rawValue: UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: Offset.flags, as: UInt64.self)))
    }

    /// Parses the first 112 bytes of `bytes`.
    package init(parsing bytes: [UInt8]) throws(FormatError) {
        self = try bytes.withRawBytes { (raw) throws(FormatError) in try MetaInfo(parsing: raw) }
    }

    /// Writes all 112 bytes to `destination`, which must hold at least ``size`` bytes.
    package func write(to destination: UnsafeMutableRawBufferPointer) {
        precondition(destination.count >= Self.size, "meta destination too small")
        func put32(_ value: UInt32, _ offset: Int) {
            destination.storeBytes(of: value.littleEndian, toByteOffset: offset, as: UInt32.self)
        }
        put32(crcDigest, Offset.crcDigest)
        put32(version.rawValue, Offset.version)
        put32(sequence, Offset.sequence)
        for (index, byte) in iv.bytes.enumerated() { destination[Offset.iv + index] = byte }
        put32(actualSize, Offset.actualSize)
        put32(lastConfirmedActualSize, Offset.lastConfirmedActualSize)
        put32(lastConfirmedCRC, Offset.lastConfirmedCRC)
        for (index, byte) in reserved.prefix(64).enumerated() { destination[Offset.reserved + index] = byte }
        destination.storeBytes(of: flags.rawValue.littleEndian, toByteOffset: Offset.flags, as: UInt64.self)
    }

    /// The 112 serialized bytes.
    package var serialized: [UInt8] {
        var bytes = [UInt8](repeating: 0, count: Self.size)
        bytes.withUnsafeMutableBytes { write(to: $0) }
        return bytes
    }

    /// The meta as MMKV interprets it on a read-write load (section 3.2): an invalid version
    /// (7 or more) reads as version 3 without flags, and flags below version 4 are ignored.
    package var normalized: MetaInfo {
        var meta = self
        if meta.version >= .firstInvalid {
            meta.version = .actualSize
            meta.flags = []
        }
        if meta.version < .flag && !meta.flags.isEmpty {
            meta.flags = []
        }
        return meta
    }

    /// Whether MMKV would take `actualSize` from this meta rather than from the data file's header.
    package var holdsActualSize: Bool { version >= .actualSize }

    /// How a meta update must reach the file.
    package enum UpdateWrite: Equatable, Sendable {
        /// Only the CRC (offset 0) and `actualSize` (offset 28) changed.
        case crcAndSizeOnly
        /// The whole struct must be written.
        case wholeStruct
    }

    /// Applies MMKV's `writeActualSize` rules (section 3.3) and says which bytes must be written.
    ///
    /// - Parameters:
    ///   - actualSize: the new used size of the data region.
    ///   - crc: the CRC of the new region.
    ///   - newIV: a new IV, when the region was re-encrypted from position 0.
    ///   - increasesSequence: true for full write-backs, clears and other whole-file changes.
    package mutating func update(
        actualSize: UInt32, crc: UInt32, iv newIV: InitializationVector? = nil, increasesSequence: Bool
    ) -> UpdateWrite {
        crcDigest = crc
        self.actualSize = actualSize
        var write = UpdateWrite.crcAndSizeOnly
        if version < .sequence {
            version = .sequence
            write = .wholeStruct
        }
        if let newIV {
            iv = newIV
            if version < .randomIV { version = .randomIV }
            write = .wholeStruct
        }
        if increasesSequence {
            sequence &+= 1
            lastConfirmedActualSize = actualSize
            lastConfirmedCRC = crc
            if version < .actualSize { version = .actualSize }
            write = .wholeStruct
        }
        if version < .flag {
            flags = []
            version = .flag
            write = .wholeStruct
        }
        return write
    }
}
