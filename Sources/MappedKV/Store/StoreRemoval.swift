import Logging
import MappedKVFormat
import MappedKVIO

/// Deletes a store's files while other processes may have it open (docs/FORMAT.md 6.5).
///
/// The invariant: a process that has the store open when it is removed sees an empty, sound
/// store at its next access, never a half-deleted one and never a mapping past the end of a file.
/// Under the exclusive `flock`, the journal is deleted, the data file is truncated to 0 bytes and
/// the meta becomes that of an empty store with its sequence incremented (the meta file keeps
/// its size: other processes map it); then both names are unlinked. Every open instance sees the
/// sequence change, takes the lock, remaps and loads the empty store. Opens that were waiting
/// for the lock find their files unlinked and open again by name (``StoreFiles/open(_:readOnly:multiProcess:processLock:createsIfMissing:)``).
/// A shared-memory lock file (6.6) is unlinked with them.
enum StoreRemoval {
    /// Removes the files of `location`; false if there were none.
    ///
    /// The caller makes sure this process does not have the store open.
    static func remove(_ location: StoreLocation, logger: Logger) throws(MappedKVError) -> Bool {
        let dataExists = Directory.fileExists(location.dataPath)
        let journalExists = Directory.fileExists(location.journalPath)
        guard let held = try DetachedStoreLock.take(location, kind: .exclusive, writable: true) else {
            // No meta file, so no MappedKV or MMKV instance can hold the store open.
            guard dataExists || journalExists else { return false }
            try unlink(location.journalPath)
            try unlink(location.dataPath)
            try unlink(location.lockPath)
            try removeIndexFile(location)
            logger.debug("removed store files", metadata: ["id": "\(location.id)", "metaFile": "absent"])
            return true
        }
        let old = try held.currentMeta()
        try unlink(location.journalPath)
        // A process reading through its mapping of the data file (FORMAT.md 12.5) would fault on
        // a truncated file: the file is then left at its size; the meta below empties the store.
        let readersMapIt =
            (try? ByteRangeLock.isLockedByOthers(held.metaFile, offset: StoreLock.mappedReaderByte, length: 1)) ?? true
        if Directory.fileExists(location.dataPath), !readersMapIt {
            try systemCall { () throws(SystemError) in
                let data = try FileDescriptor.open(location.dataPath, access: .readWriteCreate)
                defer { data.close() }
                try data.truncate(to: 0)
            }
        }
        var empty = MetaInfo()
        empty.version = .flag
        empty.sequence = old.sequence &+ 1
        let bytes = empty.serialized
        try systemCall { () throws(SystemError) in
            try bytes.withRawBytes { (raw) throws(SystemError) in try held.metaFile.write(raw, at: 0) }
        }
        try unlink(location.dataPath)
        try unlink(location.metaPath)
        // Instances still open keep their mapping of it; a new store at this ID starts without one.
        try unlink(location.lockPath)
        try removeIndexFile(location)
        logger.debug(
            "removed store files", metadata: ["id": "\(location.id)", "sequence": "\(empty.sequence)"])
        return true
    }

    /// The index file (docs/FORMAT.md 12) goes too: it describes the removed log. A process that
    /// still has the store open may write one again at its close; its stamp and the CRC check
    /// keep a later store at this ID from adopting it.
    private static func removeIndexFile(_ location: StoreLocation) throws(MappedKVError) {
        try systemCall { () throws(SystemError) in try IndexFile.remove(location.indexPath) }
    }

    private static func unlink(_ path: String) throws(MappedKVError) {
        try systemCall { () throws(SystemError) in try FileDescriptor.remove(path) }
    }
}
