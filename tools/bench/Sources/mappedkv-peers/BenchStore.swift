/// One key-value store under benchmark.
///
/// Every conforming type is a `final class`, and the driver (``Workloads``) is generic over it
/// and called with the concrete type, so in a release build each store gets its own specialized
/// copy of the timed loops: the loops call the store's methods directly (usually inlined), never
/// through a witness table (checked in the disassembly: the specialized drivers do not reference the
/// BenchStore witness tables). The protocol costs nothing inside the timing.
protocol BenchStore: AnyObject {
    /// Opens the store in `directory`, an empty directory that exists, creating its files.
    init(directory: String) throws

    func setInt32(_ value: Int32, forKey key: String) throws
    func setString(_ value: String, forKey key: String) throws
    func int32(forKey key: String) throws -> Int32?
    func string(forKey key: String) throws -> String?
    func remove(forKey key: String) throws

    /// Whether `key` has a value; used only by the checks, never timed.
    func contains(_ key: String) throws -> Bool

    /// Releases the store (after making its writes durable where the store does that on close). Not timed.
    func close() throws

    /// Opens the store in `directory` again and reads every entry of a store holding only Int32
    /// values: how many there were and their sum, so that the load cannot be skipped.
    static func reopenAndLoad(directory: String) throws -> LoadedEntries
}

/// What a reopen found.
struct LoadedEntries {
    var count: Int
    /// The sum of the Int32 values, or nil when the store's load does not decode values (MappedKV:
    /// the open indexes every record; values are decoded by the getters).
    var sum: Int64?
}
