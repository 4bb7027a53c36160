import MappedKV

/// MappedKV in single-process mode, unencrypted: the configuration `mappedkv bench` uses.
final class MappedKVStore: BenchStore {
    static let storeID = "bench"
    let store: MappedKV

    init(directory: String) throws {
        store = try MappedKV(id: Self.storeID, directory: directory)
    }

    // Not inlined: inlined into the specialized driver, these two were still called through the
    // BenchStore witness table in every iteration (seen with objdump, Swift 6.3); out of line they
    // are plain direct calls, like every other call of the timed loops.
    @inline(never)
    func setInt32(_ value: Int32, forKey key: String) throws { try store.set(value, forKey: key) }

    @inline(never)
    func setString(_ value: String, forKey key: String) throws { try store.set(value, forKey: key) }

    @inline(__always)
    func int32(forKey key: String) throws -> Int32? { try store.int32(forKey: key) }

    @inline(__always)
    func string(forKey key: String) throws -> String? { try store.string(forKey: key) }

    @inline(__always)
    func remove(forKey key: String) throws { try store.removeValue(forKey: key) }

    func contains(_ key: String) throws -> Bool { try store.contains(key) }

    func close() throws { store.close() }

    /// The open reads, checks (CRC, sizes, decoding) and indexes every record, as in
    /// `mappedkv bench`; `count` then reports the keys loaded.
    static func reopenAndLoad(directory: String) throws -> LoadedEntries {
        let reopened = try MappedKV(id: storeID, directory: directory)
        defer { reopened.close() }
        return LoadedEntries(count: try reopened.count, sum: nil)
    }
}
