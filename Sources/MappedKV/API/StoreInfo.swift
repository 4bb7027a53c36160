/// A snapshot of a store's file-level state, as ``MappedKV/info()`` reports it.
public struct StoreInfo: Sendable, Equatable {
    /// The store's ID.
    public var id: String
    /// The data file's path.
    public var dataPath: String
    /// The meta file's path.
    public var metaPath: String
    /// The meta as this instance last wrote or verified it (MMKV's version rules applied).
    public var meta: StoreMeta
    /// The data file's size.
    public var fileSize: Int
    /// The used size of the data region.
    public var actualSize: Int
    /// The number of live keys.
    public var keyCount: Int
    /// The number of records in the data region, dead ones and deletions included.
    public var recordCount: Int
    /// The item-size holder's bytes at the start of the region (empty for an empty region).
    public var holder: [UInt8]
    /// The data file's 4-byte header.
    public var header: UInt32
}
