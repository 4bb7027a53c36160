import MappedKVFormat

// Releasing an idle store's memory (MMKV's `clearMemoryCache`): the mirror and the index are
// dropped and the files stay open and mapped. The invariant: while ``StoreCore/isMemoryReleased``
// is set, nothing reads ``StoreCore/LoadedRegion/mirror`` or ``StoreCore/LoadedRegion/index``; every read and write goes
// through `prepareRead` or `writing`, which reload them from the files first.
extension StoreCore {
    /// Drops the in-memory copy of the region and the key index; the next access reloads them.
    func releaseMemory() throws(MappedKVError) {
        let files = try openFiles()
        dropMappedReads(files)
        loaded.mirror = []
        loaded.index = KeyIndex()
        scratch = []
        spareBatch = BatchOperations()
        loaded.recordCount = 0
        isMemoryReleased = true
        logger.debug("released the store's memory", metadata: ["id": "\(location.id)"])
    }

    /// Loads the mirror and index again after ``releaseMemory()`` (under the shared lock in
    /// multi-process mode); a change by another process meanwhile is reported as a reload.
    func reloadReleasedMemory(_ files: StoreFiles) throws(MappedKVError) {
        let before = observed
        if isMultiProcess { _ = try takeLock(files, .shared) }
        defer { if isMultiProcess { releaseLock(.shared) } }
        // The stamp is published after the signal goes up (Store/ObservedStamp.swift).
        tracking.publishesObserved = false
        defer {
            tracking.publishesObserved = true
            publishObserved()
        }
        try reload(files, key: cryptKey, policy: .consult(configuration.recoveryHandler))  // adopt clears the flag
        if isMultiProcess && observed != before {
            tracking.pendingChanges.append(
                ExternalChange(storeID: location.id, kind: .reloaded, sequence: loaded.meta.sequence))
            signal.pending.store(true, ordering: .sequentiallyConsistent)
        }
    }
}
