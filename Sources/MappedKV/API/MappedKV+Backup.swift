import MappedKVCrypto

// Backup and restore of whole stores (MMKV's `backupOneToDirectory`, `restoreOneFromDirectory`,
// `backupAllToDirectory`, `restoreAllFromDirectory`). A backup is copied under the store's shared
// lock, so it is one state between two writes even while other processes write; a restore is
// one journaled full write-back under the exclusive lock with the sequence incremented, so every
// process that has the store open reloads the restored state (docs/FORMAT.md 6.5).
extension MappedKV {
    /// Copies the store `id` of `directory` into `backupDirectory` (same ID, same file names).
    ///
    /// The copy is consistent while other processes write: it is taken under the store's shared
    /// lock (or, if this process has the store open, with its instance locked). Files already in
    /// `backupDirectory` for that ID are replaced; no process should have that copy open. Do not
    /// call it from inside ``withExclusiveLock(_:)``.
    ///
    /// ```swift
    /// let base = FileManager.default.temporaryDirectory.appendingPathComponent("kv-backup-demo").path
    /// let store = try MappedKV(id: "settings", directory: base + "/live")
    /// try store.set("on", forKey: "mode")
    /// try MappedKV.backupStore(id: "settings", directory: base + "/live", to: base + "/backup")
    /// try store.set("off", forKey: "mode")
    /// try MappedKV.restoreStore(id: "settings", directory: base + "/live", from: base + "/backup")
    /// let mode = try store.string(forKey: "mode")   // "on"
    /// ```
    public static func backupStore(id: String, directory: String, to backupDirectory: String) throws(MappedKVError) {
        let source = try StoreLocation(id: id, directory: directory)
        let destination = try StoreLocation(id: id, directory: backupDirectory)
        try backup(source, to: destination)
    }

    /// Replaces the store `id` of `directory` by its copy in `backupDirectory`.
    ///
    /// The copy is checked first (sizes and CRC; with a key, that every record decodes), and a
    /// damaged one is refused with ``MappedKVError/backupFailed(id:reason:)`` without touching
    /// the live store. The store is then replaced in one crash-safe write-back under its exclusive
    /// lock. Processes that have it open reload the restored state at their next access; if this
    /// process has it open, its instance does so at once and the copy must decode with the key it
    /// was opened with (`cryptKey` is then not used). Otherwise `cryptKey`, if given, is the key
    /// the copy is checked with; a store that does not exist yet is created. Do not call it from
    /// inside ``withExclusiveLock(_:)``.
    public static func restoreStore(
        id: String, directory: String, from backupDirectory: String, cryptKey: CryptKey? = nil
    ) throws(MappedKVError) {
        let source = try StoreLocation(id: id, directory: backupDirectory)
        let destination = try StoreLocation(id: id, directory: directory)
        try restore(source, to: destination, cryptKey: cryptKey)
    }

    /// Backs up every store of `directory` (those ``stores(in:)`` lists) into `backupDirectory`,
    /// each as ``backupStore(id:directory:to:)`` does; returns how many. The first failure stops
    /// the run and throws; stores copied before it stay copied.
    @discardableResult
    public static func backupAllStores(directory: String, to backupDirectory: String) throws(MappedKVError) -> Int {
        let found = try stores(in: directory)
        for store in found {
            try backup(store.location, to: try backupLocation(of: store, under: backupDirectory))
        }
        return found.count
    }

    /// Restores every store backed up in `backupDirectory` into `directory`, each as
    /// ``restoreStore(id:directory:from:cryptKey:)`` does, checking each copy with the key
    /// `cryptKey` gives for its file name (the ID, or the MD5 name of a hashed ID); returns how many.
    /// The first failure stops the run and throws; stores restored before it stay restored.
    @discardableResult
    public static func restoreAllStores(
        directory: String, from backupDirectory: String, cryptKey: (String) -> CryptKey? = { _ in nil }
    ) throws(MappedKVError) -> Int {
        let found = try stores(in: backupDirectory)
        for store in found {
            try restore(
                store.location, to: try backupLocation(of: store, under: directory), cryptKey: cryptKey(store.fileName))
        }
        return found.count
    }

    /// Where `store`'s files go under another root directory.
    private static func backupLocation(
        of store: StoreFileSummary, under root: String
    ) throws(MappedKVError) -> StoreLocation {
        guard store.id != nil else {
            let trimmed = root.hasSuffix("/") && root.count > 1 ? String(root.dropLast()) : root
            return try StoreLocation(id: store.fileName, directory: trimmed + "/specialCharacter")
        }
        return try StoreLocation(id: store.fileName, directory: root)
    }

    private static func backup(_ source: StoreLocation, to destination: StoreLocation) throws(MappedKVError) {
        guard source.dataPath != destination.dataPath else {
            throw .invalidArgument("the backup directory is the store's own directory")
        }
        let image = try StoreRegistry.withStoreSteady(source) { () throws(MappedKVError) in
            try StoreBackup.read(source)
        }
        try StoreBackup.write(image, to: destination)
    }

    private static func restore(
        _ source: StoreLocation, to destination: StoreLocation, cryptKey: CryptKey?
    ) throws(MappedKVError) {
        guard source.dataPath != destination.dataPath else {
            throw .invalidArgument("the backup directory is the store's own directory")
        }
        let image = try StoreRegistry.withStoreSteady(source) { () throws(MappedKVError) in
            try StoreBackup.read(source)
        }
        try StoreRegistry.withInstance(of: destination) { (instance) throws(MappedKVError) in
            if let instance {
                try instance.core.withLock { (core) throws(MappedKVError) in
                    try core.restore(image, backupID: source.id)
                }
                return
            }
            let replacement = try StoreBackup.replacement(from: image, id: source.id, key: cryptKey)
            // With the lock the processes that have the store open use, whichever it is.
            let files = try StoreFiles.open(destination, readOnly: false, multiProcess: true, processLock: nil)
            defer { files.close() }  // which releases the exclusive lock
            try StoreBackup.commit(replacement, into: files)
        }
    }
}
