import MappedKVFormat

// Durability points: when the writes so far are on disk, and the checkpoint that says so
// (docs/FORMAT.md 3.5 and 7.3d).
//
// A durability point flushes the data file, then records the state as the durability point in
// the meta's checkpoints, then flushes the meta, as a journal commits: the meta on disk never
// vouches for data that is not. A recovery after a power loss keeps at least that state, and
// treats anything it loses past it as writes lost to the crash rather than as damage.
extension StoreCore {
    /// Makes every write so far durable: `sync()`, and `close()` through ``closeDurably()``.
    ///
    /// In multi-process mode it runs under the exclusive lock, so that the state it records is
    /// one no other writer is halfway through. A failed flush closes the store: the kernel may
    /// have dropped the pages it could not write, so nothing this instance holds can be trusted
    /// to be on disk, and flushing again could report a success that is not one.
    func sync() throws(MappedKVError) {
        guard !configuration.isReadOnly else {
            try openFiles()
            return
        }
        if mappedReads.isActive, let files = lifecycle.files {
            // A flush needs no private state: a reader that syncs keeps reading through its mappings.
            guard hasUnflushedWrites else { return }
            if isMultiProcess { _ = try takeLock(files, .exclusive) }
            defer { if isMultiProcess { releaseLock(.exclusive) } }
            return try flushDurably(files)
        }
        try writing { (files) throws(MappedKVError) in try flushDurably(files) }
    }

    /// Flushes data, records the durability point, flushes the meta. Call it holding the
    /// exclusive lock (or owning the store).
    func flushDurably(_ files: StoreFiles) throws(MappedKVError) {
        do {
            try files.synchronizeData()
            files.markDurable(files.storedCheckpoint)
            try files.synchronizeMeta()
        } catch {
            throw poison(error)
        }
        tracking.flushedStamp = files.metaStamp()
    }

    /// Whether the files changed since this instance's last durability point: every write moves
    /// the meta stamp, so a close or an interval with nothing written costs nothing.
    var hasUnflushedWrites: Bool {
        guard let files = lifecycle.files else { return false }
        return files.metaStamp() != tracking.flushedStamp
    }

    /// After a write under the exclusive lock, with ``Durability/everyWrite``: the write is made
    /// durable before it returns (once, however deeply the writes nest).
    @inline(never)
    func flushEveryWrite(_ files: StoreFiles) throws(MappedKVError) {
        guard hasUnflushedWrites else { return }
        try flushDurably(files)
    }

    /// The flush of the last close: a durability point when this instance wrote anything since
    /// the last one. `close()` cannot throw, so a failure is logged; a caller that must know
    /// calls `sync()` first.
    func closeDurably() {
        guard !configuration.isReadOnly, hasUnflushedWrites, let files = lifecycle.files else { return }
        do throws(MappedKVError) {
            _ = try takeLock(files, .exclusive)
            defer { releaseLock(.exclusive) }
            try flushDurably(files)
        } catch {
            logger.error(
                "the flush at close failed: writes since the last durability point may be lost",
                metadata: ["id": "\(location.id)", "error": "\(error)"])
        }
    }

    /// Gives a store opened for writing its checkpoints if it has none yet (a new store, one
    /// MMKV made, or one older than them), starting from a durability point at its current
    /// state. A store whose files this open created is made durable with their names, so that
    /// the first crash cannot take the files themselves.
    func ensureCheckpoints(_ files: StoreFiles) throws(MappedKVError) {
        guard !configuration.isReadOnly, !files.hasCheckpoints else { return }
        guard files.metaFileSize >= DurabilityCheckpoints.end else { return }
        try files.synchronizeData()
        files.initializeCheckpoints(durable: files.storedCheckpoint)
        try files.synchronizeMeta()
        if files.createdFiles { try files.synchronizeDirectory(withParent: true) }
        tracking.flushedStamp = files.metaStamp()
    }
}
