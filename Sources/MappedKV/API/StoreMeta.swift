import MappedKVFormat

/// The fields of a store's meta file (`<id>.crc`, docs/FORMAT.md section 3) as plain numbers and
/// bytes, as ``InspectionReport/storedMeta`` and ``StoreInfo/meta`` report them.
public struct StoreMeta: Sendable, Equatable {
    /// `m_version`: the format level the meta was written at, 0 (a new file) to 4 in MMKV 2.x.
    public var version: UInt32
    /// `m_sequence`: the count of full write-backs, clears and other whole-file changes.
    public var sequence: UInt32
    /// `m_crcDigest`: the CRC-32 of the data region, over the ciphertext of an encrypted store.
    public var crcDigest: UInt32
    /// `m_actualSize`: the bytes used in the data region, which MMKV trusts from version 3.
    public var actualSize: UInt32
    /// The used size at the last full write-back.
    public var lastConfirmedActualSize: UInt32
    /// The CRC at the last full write-back.
    public var lastConfirmedCRC: UInt32
    /// `m_flags`: the flag bits (bit 0: keys may expire), meaningful from version 4.
    public var flags: UInt64
    /// `m_vector`: the 16-byte initialization vector of an encrypted store, meaningful from version 2.
    public var iv: [UInt8]

    /// The fields of `meta`.
    package init(_ meta: MetaInfo) {
        version = meta.version.rawValue
        sequence = meta.sequence
        crcDigest = meta.crcDigest
        actualSize = meta.actualSize
        lastConfirmedActualSize = meta.lastConfirmedActualSize
        lastConfirmedCRC = meta.lastConfirmedCRC
        flags = meta.flags.rawValue
        iv = meta.iv.bytes
    }
}

/// The record decoder's pass over a data region, as ``InspectionReport/decode`` reports it.
public struct RegionDecodeSummary: Sendable, Equatable {
    /// The offset just past the last record (or item-size holder) that decoded: where decoding
    /// stopped when it stopped early.
    public var validEnd: Int
    /// How many records decoded, deletions and superseded records included.
    public var recordCount: Int
    /// How many records with an empty key were skipped, as MMKV skips them.
    public var skippedEmptyKeys: Int
    /// Why decoding stopped before the end of the region, or nil if it reached the end.
    public var error: FormatError?

    /// Whether the whole region decoded.
    public var isComplete: Bool { error == nil }

    /// The fields of `summary`.
    package init(_ summary: DecodeSummary) {
        validEnd = summary.validEnd
        recordCount = summary.recordCount
        skippedEmptyKeys = summary.skippedEmptyKeys
        error = summary.error
    }
}
