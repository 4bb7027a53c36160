import Glibc
import MappedKVFormat
import MappedKVIO

// Opening a store's files: creating them only when neither exists, taking the `flock` and the mode
// lock, settling the inter-process lock (docs/FORMAT.md 6.1, 6.6) and mapping both files. The
// invariant: an open either returns files locked as asked, or changes nothing and holds nothing.
extension StoreFiles {
    /// Opens both files, takes the inter-process lock and the mode lock, and maps the files at
    /// their sizes as seen under the lock; nothing existing is changed.
    ///
    /// Returns with the `flock` held: exclusive for a read-write open (creating, sizing and
    /// repairing happen under it), shared for a read-only one. The caller releases it.
    ///
    /// The mode lock is an OFD lock on byte 1 of the meta file, held until the files are closed:
    /// shared for multi-process and read-only instances, exclusive for a single-process writer,
    /// so that a store cannot be written in single-process mode while anyone else has it open.
    static func open(
        _ location: StoreLocation, readOnly: Bool, multiProcess: Bool, processLock: ProcessLock? = .flock,
        createsIfMissing: Bool = true
    ) throws(MappedKVError) -> StoreFiles {
        // A store removed (`MappedKV.removeStore`) while this open waited for its lock leaves the
        // open holding deleted files: it starts again by name, so it never writes to files no
        // other opener can find.
        for _ in 0..<8 {
            if let files = try openOnce(
                location, readOnly: readOnly, multiProcess: multiProcess, processLock: processLock,
                createsIfMissing: createsIfMissing)
            {
                return files
            }
        }
        throw .closed("store '\(location.id)' was removed again and again while it was being opened")
    }

    /// One attempt of ``open(_:readOnly:multiProcess:)``: nil if the files were deleted while it
    /// waited for the lock.
    private static func openOnce(
        _ location: StoreLocation, readOnly: Bool, multiProcess: Bool, processLock: ProcessLock?,
        createsIfMissing: Bool
    ) throws(MappedKVError) -> StoreFiles? {
        let dataExists = Directory.fileExists(location.dataPath)
        let metaExists = Directory.fileExists(location.metaPath)
        if readOnly {
            guard dataExists, metaExists else { throw .storeNotFound(path: location.dataPath) }
        } else if !dataExists || !metaExists {
            // Neither file: the store does not exist (one file alone is a damaged store).
            if !createsIfMissing && !dataExists && !metaExists { throw .storeNotFound(path: location.dataPath) }
            try refuseToRecreateHalf(location, dataExists: dataExists, metaExists: metaExists)
            try systemCall { () throws(SystemError) in try Directory.create(location.fileDirectory) }
        }
        let access: FileDescriptor.Access = readOnly ? .readOnly : .readWriteCreate
        let dataFile: FileDescriptor
        let metaFile: FileDescriptor
        dataFile = try systemCall { () throws(SystemError) in try FileDescriptor.open(location.dataPath, access: access)
        }
        do { metaFile = try FileDescriptor.open(location.metaPath, access: access) } catch {
            dataFile.close()
            throw .system(SystemCallError(error))
        }
        // Closing the descriptors releases every lock taken here.
        func closeBoth() {
            dataFile.close()
            metaFile.close()
        }
        let openKind: LockKind = readOnly ? .shared : .exclusive
        let flock = FileLock(metaFile)
        let modeKind: LockKind = multiProcess || readOnly ? .shared : .exclusive
        let modeTaken: Bool
        do throws(SystemError) {
            try flock.lock(openKind)
            let metaLinks = try metaFile.linkCount()
            let dataLinks = try dataFile.linkCount()
            if metaLinks == 0 || dataLinks == 0 {
                closeBoth()
                return nil
            }
            modeTaken = try takeModeLock(metaFile, kind: modeKind)
        } catch {
            closeBoth()
            throw .system(SystemCallError(error))
        }
        guard modeTaken else {
            let reason = modeConflictReason(metaFile, wanted: modeKind)
            closeBoth()
            throw .modeConflict(id: location.id, reason: reason)
        }
        do throws(MappedKVError) {
            let lock = try StoreLock.settle(
                location, metaFile: metaFile, flock: flock, kind: openKind, sharing: multiProcess || readOnly,
                choice: processLock, canWrite: !readOnly)
            return try systemCall { () throws(SystemError) in
                let data = try MappedRegion(file: dataFile, length: try dataFile.size(), writable: !readOnly)
                let meta = try MappedRegion(file: metaFile, length: try metaFile.size(), writable: !readOnly)
                return StoreFiles(
                    location: location, isReadOnly: readOnly, dataFile: dataFile, metaFile: metaFile,
                    data: data, meta: meta, lock: lock, identity: try FileIdentity(dataFile),
                    createdFiles: !readOnly && (!dataExists || !metaExists))
            }
        } catch {
            closeBoth()
            throw error
        }
    }

    /// What holds the mode lock that `wanted` could not get, and what to do: the other opener's mode,
    /// read from which kind of lock it still allows, and the processes that have the files open.
    private static func modeConflictReason(_ metaFile: FileDescriptor, wanted: LockKind) -> String {
        let who = FileHolders.describe(holding: metaFile.path)
        // A shared lock is refused only by a single-process writer's exclusive one. (Our probe's
        // lock goes when the caller closes the file.)
        let othersShare =
            wanted == .exclusive
            && ((try? ByteRangeLock.tryLock(metaFile, offset: 1, length: 1, kind: .shared)) ?? false)
        if othersShare {
            return "\(who) has it open in multi-process mode (or read-only), which a single-process open cannot "
                + "join: open it with isMultiProcess: true (CLI: --multi-process) to share it"
        }
        return "\(who) has it open in single-process mode, which cannot be shared: close it there, or open it "
            + "with isMultiProcess: true (CLI: --multi-process) in every process that uses it"
    }

    /// Takes the mode lock, waiting out a conflict that lasts less than about a quarter second.
    ///
    /// A child forked by this process holds copies of its descriptors until it calls `exec`, and
    /// with them the locks of descriptors this process has since closed; such a conflict is gone
    /// within milliseconds. A store really open in another mode stays locked and is reported.
    static func takeModeLock(_ metaFile: FileDescriptor, kind: LockKind) throws(SystemError) -> Bool {
        try ByteRangeLock.lockWaitingOutBriefHolders(metaFile, offset: 1, length: 1, kind: kind)
    }

    /// Refuses to create one file of a pair when the other holds data: a fresh file beside it
    /// would make that data unreachable, and the next write-back would destroy it.
    private static func refuseToRecreateHalf(
        _ location: StoreLocation, dataExists: Bool, metaExists: Bool
    ) throws(MappedKVError) {
        if dataExists && !metaExists {
            let data = try readFile(location.dataPath)
            // An all-zero data file holds nothing: creating its meta is safe. The existence checks
            // ran without a lock, so a concurrent creator (data file first, then meta, then the
            // first write) may have made the meta since: only a meta that is still missing counts.
            if data.contains(where: { $0 != 0 }) && !Directory.fileExists(location.metaPath) {
                throw .corrupted(id: location.id, reason: .metaFileMissing)
            }
        }
        if metaExists && !dataExists {
            let bytes = try readFile(location.metaPath, count: MetaInfo.size)
            if bytes.count >= MetaInfo.size, let meta = try? MetaInfo(parsing: bytes),
                meta.normalized.holdsActualSize, meta.actualSize > 0,
                // A meta that records data was written after its data file was created; a data
                // file that exists now was created by a concurrent opener after the first check.
                !Directory.fileExists(location.dataPath)
            {
                throw .corrupted(id: location.id, reason: .dataFileMissing)
            }
        }
    }

    /// The first `count` bytes of the file at `path` (all of it when `count` is nil).
    private static func readFile(_ path: String, count: Int? = nil) throws(MappedKVError) -> [UInt8] {
        try systemCall { () throws(SystemError) in
            let file = try FileDescriptor.open(path, access: .readOnly)
            defer { file.close() }
            guard let count else { return try file.read(count: try file.size(), at: 0) }
            return try file.read(count: count, at: 0)
        }
    }
}
