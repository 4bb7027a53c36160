/// Writes lost to a crash: what a load found when the meta file vouched for more than reached
/// the disk, and the files still held everything up to the last durability point.
///
/// This is the durability contract at work (<doc:DurabilityContract>), not damage: the store opens with
/// the state after a prefix of its writes that includes every write made before the last
/// ``MappedKV/sync()`` or ``MappedKV/close()``, and loses only newer ones. No recovery handler is
/// asked and nothing is copied aside; a read-write open rewrites the kept state at once, so the
/// files are sound again. A read-only open keeps the state in memory only.
public struct CrashLossReport: Sendable, Equatable, CustomStringConvertible {
    /// The store's ID.
    public var storeID: String
    /// The bytes of the data region kept: the prefix the writes were lost after.
    public var keptBytes: Int
    /// Live keys in the kept state.
    public var keptKeys: Int
    /// The bytes the meta file had recorded past the kept prefix.
    public var lostBytes: Int
    /// How many writes (sets, removals, batches) past the kept prefix the meta file had recorded,
    /// at least: each append's state is recorded, the oldest ones overwritten by newer ones.
    public var lostWrites: Int
    /// The size of the data region at the last durability point, which the kept prefix includes.
    public var durableBytes: Int
    /// Whether the store is open read-only, in which case the kept state is in memory only.
    public var isReadOnly: Bool

    /// Creates a report.
    public init(
        storeID: String, keptBytes: Int, keptKeys: Int, lostBytes: Int, lostWrites: Int, durableBytes: Int,
        isReadOnly: Bool
    ) {
        self.storeID = storeID
        self.keptBytes = keptBytes
        self.keptKeys = keptKeys
        self.lostBytes = lostBytes
        self.lostWrites = lostWrites
        self.durableBytes = durableBytes
        self.isReadOnly = isReadOnly
    }

    /// What was kept and lost, in one line.
    public var description: String {
        "store '\(storeID)': a crash lost at least \(lostWrites) write\(lostWrites == 1 ? "" : "s") "
            + "(\(lostBytes) bytes) made after the last durability point; kept \(keptKeys) keys "
            + "(\(keptBytes) bytes, the durability point at \(durableBytes))"
    }
}
