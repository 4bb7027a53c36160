import MappedKVFormat

// Whole-store export and import as plain values: every live entry with its payload and expiry
// time, and a list of such entries written back in one batch, so that a store can be copied
// through any medium (the CLI's `export` and `import` write them as JSON lines) and come back
// byte for byte.
extension MappedKV {
    /// Every live entry with its payload and expiry time, sorted by key bytes. Expired keys are
    /// left out; ``StoreEntry/expiresAt`` is nil when key expiry is off.
    ///
    /// ```swift
    /// import Foundation
    /// import MappedKV
    ///
    /// let dir = FileManager.default.temporaryDirectory.appendingPathComponent("kv-entries-\(getpid())").path
    /// defer { try? FileManager.default.removeItem(atPath: dir) }
    /// let source = try MappedKV(id: "source", directory: dir)
    /// try source.set(42, forKey: "answer")
    /// let copy = try MappedKV(id: "copy", directory: dir)
    /// try copy.importEntries(try source.exportedEntries())
    /// assert(try copy.int(forKey: "answer") == 42)
    /// ```
    public func exportedEntries() throws(MappedKVError) -> [StoreEntry] {
        try withCore { (core) throws(MappedKVError) -> [StoreCore.BatchEntry] in try core.exportEntries() }
            .map { StoreEntry(key: $0.key, payload: $0.payload, expiresAt: $0.expiry) }
            .sorted { $0.key.utf8.lexicographicallyPrecedes($1.key.utf8) }
    }

    /// Stores every entry in one write, replacing the keys' values: a reader in any process, or
    /// a process killed halfway, sees all of them or none. A key given twice keeps its last entry.
    ///
    /// With key expiry on, each value gets its ``StoreEntry/expiresAt`` (the store's default
    /// lifetime when nil); with it off, expiry times are dropped: turn it on first
    /// (``enableKeyExpiry(defaultDuration:)``) to keep them. Entries that expired before the
    /// import are stored and read as absent, as MMKV does for any expired value.
    ///
    /// - Throws: ``MappedKVError/invalidKey(_:)``, ``MappedKVError/invalidArgument(_:)`` for an
    ///   empty payload, or ``MappedKVError/valueTooLarge(size:)``, before anything is written.
    /// - Returns: how many entries were written.
    @discardableResult
    public func importEntries(_ entries: [StoreEntry]) throws(MappedKVError) -> Int {
        let batch = entries.map { StoreCore.BatchEntry(key: $0.key, payload: $0.payload, expiry: $0.expiresAt) }
        try withCore { (core) throws(MappedKVError) in try core.setPayloads(batch) }
        return entries.count
    }
}
