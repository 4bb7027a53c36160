import MappedKVFormat

// The index file (docs/FORMAT.md section 12): which loads use it, and when this process writes it.
//
// A writable open writes the file after it had to decode the log, so that the next open of the
// store, in any process, adopts the index instead, even if this process is killed rather than
// closed; a close writes it when the log moved on since the file this process last wrote or
// adopted. A read-only open only reads it. The snapshot describes ``StoreCore/observed``, the
// state the mirror and index agree with, so it needs no lock: if the log has moved on by the time
// another process reads the file, the stamp in it tells that process so.
extension StoreCore {
    /// The path the loader tries, or nil when the store keeps no index file.
    var indexFilePath: String? {
        configuration.usesIndexFile && !tracking.skipsIndexFileOnce ? location.indexPath : nil
    }

    /// Notes how a load went, before its state is adopted.
    func noteIndexOutcome(_ state: StoreLoader.LoadedState) {
        findings.indexOutcome = state.indexOutcome
        if state.indexOutcome == .adopted { tracking.indexFileStamp = state.stamp }
    }

    /// Writes the index file if this store keeps one, may write, and the file does not already
    /// describe the current state.
    func writeIndexFileIfStale(_ files: StoreFiles) {
        guard configuration.usesIndexFile, !configuration.isReadOnly, !isMemoryReleased, !mappedReads.isActive,
            tracking.indexFileStamp != observed, loaded.mirror.count == Int(observed.actualSize)
        else { return }
        let snapshot = IndexFile.Snapshot(
            index: loaded.index, stamp: observed, dataHeader: RegionValidator.header(of: files.dataFileBytes),
            recordCount: loaded.recordCount, expiryEnabled: loaded.expiryEnabled, identity: files.identity,
            unchangedSince: files.unchangedSince())
        if IndexFile.write(snapshot, key: cryptKey, to: location.indexPath, recorder: files.recorder, logger: logger) {
            tracking.indexFileStamp = observed
        }
    }
}
