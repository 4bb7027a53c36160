import MappedKVIO

// Backup and restore through this process's instance of a store: a backup copies the files while
// the instance is locked (so no thread or process writes), and a restore replaces them in one
// journaled write-back and then reloads, so the instance ends up exactly in the restored state
// (docs/FORMAT.md 6.5).
extension StoreCore {
    /// Runs `body` with the files under the inter-process lock `kind` (multi-process mode; a
    /// single-process store is this process's alone, and the caller holds the instance's mutex).
    func withFilesLocked<R>(
        _ kind: LockKind, _ body: (StoreFiles) throws(MappedKVError) -> R
    ) throws(MappedKVError) -> R {
        let files = try openFiles()
        guard isMultiProcess else { return try body(files) }
        _ = try takeLock(files, kind)
        defer { releaseLock(kind) }
        return try body(files)
    }

    /// Replaces the store by the backup `image`, which must decode with this store's key, and
    /// reloads from the restored files. Other processes see the sequence change and reload too.
    func restore(_ image: StoreBackup.Image, backupID: String) throws(MappedKVError) {
        let replacement = try StoreBackup.replacement(from: image, id: backupID, key: cryptKey)
        try writing { (files) throws(MappedKVError) in
            do throws(MappedKVError) {
                try StoreBackup.commit(replacement, into: files)
                let outcome = try StoreLoader.load(
                    files, key: cryptKey, treatsStoreAsPlain: configuration.treatsStoreAsPlain, access: .exclusive,
                    policy: .fail, logger: logger)
                guard case .loaded(let state) = outcome else {
                    throw .corrupted(id: location.id, reason: .interruptedWriteBack)
                }
                try adopt(state, files)
            } catch {
                throw poison(error)
            }
        }
        logger.debug("restored store", metadata: ["id": "\(location.id)", "sequence": "\(loaded.meta.sequence)"])
    }
}
