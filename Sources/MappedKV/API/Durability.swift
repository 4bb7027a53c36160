/// When a store's writes reach the disk, so that a power loss cannot take them.
///
/// Every level keeps the same contract (<doc:DurabilityContract>): after a durability point returns, a
/// power loss loses nothing written before it; between durability points it may lose writes,
/// but only the newest ones, and the store then opens with the state after some prefix of its
/// writes, reported in ``MappedKV/crashLossReport``. The levels differ in where the durability
/// points are.
public enum Durability: Sendable, Equatable, CustomStringConvertible {
    /// ``MappedKV/sync()`` and the last ``MappedKV/close()`` of the store in this process are the
    /// durability points (the default). A write costs no system call, as with MMKV.
    case atSync
    /// Every write is durable before it returns: the data file is flushed, then the meta that
    /// vouches for it, as a database commits its journal. Each write costs two flushes.
    case everyWrite
    /// As ``atSync``, and a thread of this process makes a durability point every `interval`
    /// while anything was written since the last one: a power loss loses at most about that
    /// much of the store's history.
    case interval(Duration)

    /// `at sync`, `every write` or `every 1.0 seconds`.
    public var description: String {
        switch self {
        case .atSync: "at sync"
        case .everyWrite: "every write"
        case .interval(let interval): "every \(interval)"
        }
    }
}
