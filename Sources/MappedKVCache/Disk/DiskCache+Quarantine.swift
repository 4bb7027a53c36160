import Glibc
import Logging
import MappedKV
import MappedKVIO

// Opening the manifest, and the opt-in for a damaged one (YYKVStorage resets a database it cannot
// open): the manifest's files and the value files move into `quarantine/<UTC time>-<random>/` and
// the cache starts empty. The invariants: nothing moves unless the open failed with damage that no
// encryption key explains; nothing moves while any process has the manifest open (each holds the
// store's mode lock on `manifest.crc`, docs/FORMAT.md 6.1); and the move happens under
// `trim.lock`, so processes that open one damaged cache at once quarantine it once: the others,
// waiting for the lock, then open the new manifest.

/// What ``DiskCache/init(directory:configuration:logger:)`` does when the manifest is damaged.
public enum DiskCacheDamagedManifestPolicy: Sendable, Hashable {
    /// Throw ``CacheError/store(_:)`` and change nothing on disk (the default).
    case refuse
    /// Move the damaged manifest and the value files aside into `quarantine/<UTC time>-<random>/`
    /// in the cache directory, log it at error level, and open a new, empty cache.
    ///
    /// Damage here is a manifest whose `.crc` meta file is missing, empty, zeroed or unreadable,
    /// or whose data file is missing while the meta records data. Records that do not decode
    /// although the CRC matches are what a wrong key, or a missing one, looks like, so they, and
    /// `MappedKVError.wrongCryptKey`, are still refused: a key mistake never moves a
    /// cache aside. (Damage the CRC catches is recovered by the store itself, as without this
    /// option.) Nothing is moved while another process has the manifest open; the open then
    /// throws, as with ``refuse``. (That is told by the lock every open holds on the meta file, so
    /// a process that opened the manifest before its meta file was deleted cannot be seen: close
    /// the cache everywhere before opening it this way after such damage.) Quarantine folders are
    /// never deleted by the cache.
    case quarantineAndStartEmpty
}

extension DiskCache {
    /// The folder, inside the cache directory, that holds the quarantined manifests.
    static let quarantineFolder = "quarantine"

    /// Opens the manifest store of the cache in `directory`, quarantining a damaged one if
    /// `configuration` asks for it.
    static func openManifest(
        in directory: String, configuration: DiskCacheConfiguration, logger: Logger
    ) throws(CacheError) -> MappedKV {
        let storeConfiguration = Configuration(
            isMultiProcess: true, cryptKey: configuration.cryptKey, processLock: configuration.processLock)
        func open() throws(CacheError) -> MappedKV {
            try manifestCall { () throws(MappedKVError) in
                try MappedKV(id: manifestID, directory: directory, configuration: storeConfiguration, logger: logger)
            }
        }
        do {
            return try open()
        } catch {
            guard configuration.onDamagedManifest == .quarantineAndStartEmpty, isQuarantinable(error) else {
                throw error
            }
        }
        return try withLockFile(directory + "/trim.lock") { () throws(CacheError) -> MappedKV in
            do throws(CacheError) {
                return try open()  // another process may have quarantined it while this one waited
            } catch {
                guard isQuarantinable(error) else { throw error }
                try quarantineManifest(in: directory, damage: error, clock: configuration.clock, logger: logger)
            }
            return try open()
        }
    }

    /// Whether `error` is damage to the manifest that no encryption key explains.
    static func isQuarantinable(_ error: CacheError) -> Bool {
        guard case .store(.corrupted(_, let reason)) = error else { return false }
        switch reason {
        case .metaUnreadable, .metaFileMissing, .dataFileMissing, .lengthOutOfRange, .crcMismatch: return true
        case .undecodable, .interruptedWriteBack: return false
        }
    }

    /// Moves the manifest's files and `files/` into a new quarantine folder, unless a process has
    /// the manifest open; then `damage` is thrown and nothing has moved. The caller holds `trim.lock`.
    private static func quarantineManifest(
        in directory: String, damage: CacheError, clock: CacheClock, logger: Logger
    ) throws(CacheError) {
        let location = try manifestCall { () throws(MappedKVError) in
            try StoreLocation(id: manifestID, directory: directory)
        }
        // The store's open takes the meta file's flock exclusively and keeps the shared mode lock on
        // its byte 1 until it closes: holding the flock waits out an open in progress, and the mode
        // lock, taken exclusively, is refused while any other process (or handle) has it open.
        // Without a meta file there is no lock to ask: a process that opened the store before
        // the file was deleted holds its lock on the deleted file (documented on the policy).
        var metaFile: FileDescriptor?
        defer { metaFile?.close() }  // releases both locks
        if Directory.fileExists(location.metaPath) {
            let file = try fileCall { () throws(SystemError) in
                try FileDescriptor.open(location.metaPath, access: .readWriteCreate)
            }
            metaFile = file
            let alone = try fileCall { () throws(SystemError) -> Bool in
                _ = try FileLock(file).lock(.exclusive)
                // With the shared-memory lock, an open releases the flock before it loads the
                // store and holds the mode lock until its failed load has closed the files: such
                // an opener is waited out; one that has the manifest open is not.
                return try ByteRangeLock.lockWaitingOutBriefHolders(file, offset: 1, length: 1, kind: .exclusive)
            }
            guard alone else {
                logger.error(
                    "the cache manifest is damaged but another process has it open: not quarantined",
                    metadata: ["damage": "\(damage)"])
                throw damage
            }
        }
        let folder = directory + "/" + quarantineFolder + "/" + folderName(at: clock.now())
        try fileCall { () throws(SystemError) in
            try Directory.create(folder)
            // The value files first: should this stop half-way, the manifest is still there and
            // still damaged, so the next open moves it, and no value file is ever left for a new
            // manifest to delete as an orphan.
            // The totals count the old manifest's entries: they go with it, and the new manifest's
            // first write counts its own.
            let paths = [
                directory + "/files", directory + "/" + CacheTotals.fileName, location.journalPath,
                location.dataPath, location.lockPath, location.metaPath, location.indexPath,
            ]
            for path in paths where Directory.fileExists(path) {
                let name = path.split(separator: "/").last.map(String.init) ?? path
                try Directory.rename(path, to: folder + "/" + name)
            }
            try Directory.create(directory + "/files")
        }
        logger.error(
            "quarantined a damaged cache manifest and its value files; the cache starts empty",
            metadata: ["damage": "\(damage)", "quarantine": "\(folder)"])
    }

    /// `<YYYYMMDDTHHMMSSZ>-<16 random hex digits>` for `milliseconds` since 1970.
    static func folderName(at milliseconds: UInt64) -> String {
        var seconds = time_t(clamping: milliseconds / 1000)
        var parts = tm()
        gmtime_r(&seconds, &parts)
        func two(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }
        let date = "\(parts.tm_year + 1900)\(two(parts.tm_mon + 1))\(two(parts.tm_mday))"
        let time = "\(two(parts.tm_hour))\(two(parts.tm_min))\(two(parts.tm_sec))"
        return "\(date)T\(time)Z-\(FileNames.random().prefix(16))"
    }

    /// Runs `body` holding an exclusive `flock` on the file at `path` (created if missing),
    /// waiting for other holders first.
    static func withLockFile<R>(_ path: String, _ body: () throws(CacheError) -> R) throws(CacheError) -> R {
        let file = try fileCall { () throws(SystemError) in try FileDescriptor.open(path, access: .readWriteCreate) }
        defer { file.close() }  // which releases the lock
        try fileCall { () throws(SystemError) in _ = try FileLock(file).lock(.exclusive) }
        return try body()
    }
}
