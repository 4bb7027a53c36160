import Logging
import MappedKVIO

// Storage-level functions: they work on a store's files by ID and directory, without opening it
// (MMKV's static `removeStorage`, `checkExist`, `isFileValid`, `version`). Each one that reads
// or deletes files does so under the store's inter-process lock, so it never sees, or leaves,
// a half-written store (docs/FORMAT.md 6.5).
extension MappedKV {
    /// This library's version.
    public static let version = "0.9.0"

    /// Deletes the store's files: data, meta and any write-back journal (MMKV's `removeStorage`).
    ///
    /// Safe while other processes have the store open in multi-process or read-only mode: it
    /// takes the store's exclusive lock, empties the files so those processes see an empty store
    /// at their next access (they do not crash or fault), then deletes them. Such a process keeps
    /// working on the deleted files until it closes the store, and what it writes meanwhile is
    /// lost; opening the ID again creates a new store. Quarantine copies (`<id>.corrupt-*`) are
    /// separate stores and are left alone. It waits for the lock while another process holds
    /// it; no store can be opened or closed in this process meanwhile.
    ///
    /// ```swift
    /// let dir = FileManager.default.temporaryDirectory.appendingPathComponent("kv").path
    /// try MappedKV.removeStore(id: "session", directory: dir)
    /// ```
    ///
    /// - Returns: false if the store had no files.
    /// - Throws: ``MappedKVError/storeInUse(id:operation:)`` if this process has the store open
    ///   (close every handle first), ``MappedKVError/modeConflict(id:reason:)`` if another
    ///   process has it open in single-process mode.
    @discardableResult
    public static func removeStore(id: String, directory: String, logger: Logger? = nil) throws(MappedKVError) -> Bool {
        let location = try StoreLocation(id: id, directory: directory)
        return try StoreRegistry.withInstance(of: location) { (instance) throws(MappedKVError) -> Bool in
            guard instance == nil else { throw .storeInUse(id: id, operation: "removing it") }
            return try StoreRemoval.remove(location, logger: logger ?? MappedKV.silentLogger)
        }
    }

    /// Whether both files of the store exist (MMKV's `checkExist`); nothing is opened or locked.
    public static func storeExists(id: String, directory: String) throws(MappedKVError) -> Bool {
        let location = try StoreLocation(id: id, directory: directory)
        return Directory.isRegularFile(location.dataPath) && Directory.isRegularFile(location.metaPath)
    }

    /// Whether the store's files check out without opening it (MMKV's `isFileValid`): the size
    /// fits, the CRC matches and, with `cryptKey`, every record decodes with that key. Without a
    /// key, a store that decodes neither as plain text nor otherwise is judged by its CRC alone,
    /// as MMKV does. A store with no data file is valid, as in MMKV: opening it creates it.
    ///
    /// The files are read under the store's shared lock, so a write in progress is never judged.
    public static func isStoreValid(
        id: String, directory: String, cryptKey: CryptKey? = nil
    ) throws(MappedKVError) -> Bool {
        let location = try StoreLocation(id: id, directory: directory)
        guard Directory.fileExists(location.dataPath) else { return true }
        guard Directory.fileExists(location.metaPath) else { return false }
        var image = try StoreRegistry.withStoreSteady(location) { () throws(MappedKVError) in
            try StoreBackup.read(location)
        }
        image.journal = nil  // only the files' own state is judged
        do {
            _ = try StoreBackup.replacement(from: image, id: id, key: cryptKey)
            return true
        } catch {
            if case .backupFailed = error { return false }
            throw error
        }
    }

    /// The stores in `directory` (and its `specialCharacter` folder for hashed IDs), sorted by
    /// file name: every file that has a `.crc` file beside it. Nothing is opened or locked.
    public static func stores(in directory: String) throws(MappedKVError) -> [StoreFileSummary] {
        guard !directory.isEmpty else { throw .invalidArgument("store directory is empty") }
        let root = directory.hasSuffix("/") && directory.count > 1 ? String(directory.dropLast()) : directory
        guard Directory.isDirectory(root) else { throw .storeNotFound(path: root) }
        var found = try summaries(in: root, hashed: false)
        let hashedFolder = root + "/specialCharacter"
        if Directory.isDirectory(hashedFolder) { found += try summaries(in: hashedFolder, hashed: true) }
        return found.sorted { $0.fileName.utf8.lexicographicallyPrecedes($1.fileName.utf8) }
    }

    private static func summaries(in folder: String, hashed: Bool) throws(MappedKVError) -> [StoreFileSummary] {
        let names = try systemCall { () throws(SystemError) in try Directory.entries(folder) }
        let nameSet = Set(names)
        var result: [StoreFileSummary] = []
        for name in names where nameSet.contains(name + ".crc") && !name.hasSuffix(".backup-tmp") {
            let location = try StoreLocation(id: name, directory: folder)
            guard Directory.isRegularFile(location.dataPath) else { continue }
            result.append(
                StoreFileSummary(
                    id: hashed ? nil : name, fileName: name, location: location,
                    dataFileSize: fileSize(location.dataPath), metaFileSize: fileSize(location.metaPath),
                    hasJournal: nameSet.contains(name + ".writeback")))
        }
        return result
    }

    private static func fileSize(_ path: String) -> Int {
        guard let file = try? FileDescriptor.open(path, access: .readOnly) else { return 0 }
        defer { file.close() }
        return (try? file.size()) ?? 0
    }
}
