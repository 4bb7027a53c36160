import Glibc
import MappedKVFormat
import MappedKVIO

/// A store's inter-process locks taken by a process that does not have the store open: the
/// `flock` on the meta file and the shared mode lock (docs/FORMAT.md 6.1), on a descriptor of
/// its own, and the shared-memory lock too while the store has one (6.6).
///
/// The invariant: while it is held, no MappedKV or MMKV multi-process instance reads or writes
/// the store against the lock taken (shared: no writer; exclusive: nobody), and no single-process
/// writer has the store open, since one holds the mode lock exclusively and never takes the
/// `flock` for its writes. Closing it releases both locks.
final class DetachedStoreLock {
    /// The meta file, open for the lock.
    let metaFile: FileDescriptor
    private let lock: FileLock
    /// The store's shared-memory lock, also held if the store has one (docs/FORMAT.md 6.6).
    private var sharedMemoryLock: SharedMemoryLock?

    private init(metaFile: FileDescriptor, lock: FileLock) {
        self.metaFile = metaFile
        self.lock = lock
    }

    deinit { metaFile.close() }

    /// Takes `kind` on the meta file of `location`, waiting for other processes; nil if the store
    /// has no meta file. `writable` opens the meta file for writing too.
    ///
    /// Files deleted while this waited for the lock are opened again by name. Throws
    /// ``MappedKVError/modeConflict(id:reason:)`` if a single-process writer has the store open.
    static func take(
        _ location: StoreLocation, kind: LockKind, writable: Bool
    ) throws(MappedKVError)
        -> DetachedStoreLock?
    {
        for _ in 0..<8 {
            guard Directory.fileExists(location.metaPath) else { return nil }
            let file: FileDescriptor
            do {
                file = try FileDescriptor.open(location.metaPath, access: writable ? .readWriteCreate : .readOnly)
            } catch {
                if error.errno == ENOENT { continue }
                throw .system(SystemCallError(error))
            }
            let held = DetachedStoreLock(metaFile: file, lock: FileLock(file))
            let linked = try systemCall { () throws(SystemError) -> Bool in
                try held.lock.lock(kind)
                return try file.linkCount() > 0
            }
            guard linked else { continue }  // removed meanwhile: `held` closes the descriptor
            let shared = try systemCall { () throws(SystemError) -> Bool in
                try StoreFiles.takeModeLock(file, kind: .shared)
            }
            guard shared else {
                throw .modeConflict(id: location.id, reason: "another process has it open in single-process mode")
            }
            held.sharedMemoryLock = try StoreLock.sharedMemoryLockIfPresent(location, kind: kind)
            return held
        }
        throw .closed("store '\(location.id)' was removed again and again while waiting for its lock")
    }

    /// The meta struct in the file now, or an all-zero one if it is shorter or unparsable.
    func currentMeta() throws(MappedKVError) -> MetaInfo {
        let bytes = try systemCall { () throws(SystemError) in try metaFile.read(count: MetaInfo.size, at: 0) }
        guard bytes.count == MetaInfo.size, let meta = try? MetaInfo(parsing: bytes) else { return MetaInfo() }
        return meta
    }
}
