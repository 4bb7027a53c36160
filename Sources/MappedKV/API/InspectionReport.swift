/// What ``StoreInspector`` found in a store's files. Reading it changes nothing on disk.
public struct InspectionReport: Sendable, Equatable {
    /// The store's file paths.
    public var location: StoreLocation
    /// The data file's size in bytes.
    public var dataFileSize: Int
    /// The meta file's size in bytes.
    public var metaFileSize: Int
    /// The meta struct as stored, or nil if the meta file is shorter than 112 bytes.
    public var storedMeta: StoreMeta?
    /// The data file's 4-byte header.
    public var header: UInt32
    /// The used size MMKV would load (from the meta from version 3, else the header).
    public var actualSize: Int
    /// Whether the used size fits in the data file.
    public var lengthIsValid: Bool
    /// The CRC of the data region, when the size is valid.
    public var computedCRC: UInt32?
    /// Whether the last-confirmed state (size and CRC at the last full write-back) still checks out.
    public var lastConfirmedIsValid: Bool
    /// The item-size holder's bytes.
    public var holder: [UInt8]
    /// The decoder's pass over the region, when the size is valid.
    public var decode: RegionDecodeSummary?
    /// Live keys after the decode.
    public var liveKeyCount: Int
    /// Deletion records in the region.
    public var deletionRecordCount: Int
    /// Records superseded by a later record of the same key, or by a deletion.
    public var supersededRecordCount: Int
    /// Bytes of the live records (the holder excluded).
    public var liveBytes: Int
    /// The first problem found, or nil if the store is sound.
    public var problem: String?
    /// What opening the store would do: load it as it is, repair it losslessly, or report damage.
    public var verdict: LoadVerdict = .sound
    /// Whether a write-back journal (`<data file>.writeback`) is present.
    public var journalPresent = false

    /// Whether sizes, CRC and decoding all check out.
    public var isSound: Bool { problem == nil }
    /// Whether the CRC of the region matches the meta.
    public var crcIsValid: Bool { computedCRC != nil && computedCRC == storedMeta?.crcDigest }
    /// Data file bytes per live byte (1 would be a file holding only live records).
    public var spaceAmplification: Double { Double(dataFileSize) / Double(max(liveBytes, 1)) }
}
