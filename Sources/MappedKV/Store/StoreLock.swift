import Glibc
import MappedKVIO

/// The inter-process lock a store instance takes for its reads and writes: MMKV's `flock` on the
/// meta file, or the shared-memory lock (``ProcessLock``, docs/FORMAT.md 6.6).
///
/// Which one a multi-process store uses is settled at open, under the exclusive `flock` every
/// read-write open takes (a read-only open takes it shared), and shown to other openers by
/// open-file-description locks on the meta file that each instance holds until it closes:
/// byte 2 shared by every instance that shares the store through `flock`, byte 3 shared by every
/// instance that shares it through the shared-memory lock. An open that finds the other byte held
/// fails with ``MappedKVError/modeConflict(id:reason:)``. The invariant: two instances that share
/// a store never lock it with different locks. (MMKV processes hold neither byte; they must never
/// share a store in the shared-memory mode.)
enum StoreLock {
    case file(FileLock)
    case sharedMemory(SharedMemoryLock)

    /// The meta-file byte every `flock` sharer holds shared.
    static let flockSharerByte = 2
    /// The meta-file byte every shared-memory-lock sharer holds shared.
    static let sharedMemorySharerByte = 3
    /// The meta file's byte that a process reading through its mappings holds shared (OFD lock),
    /// so that no process shrinks the data file under its reads (docs/FORMAT.md 12.5).
    static let mappedReaderByte = 4

    /// Takes the lock; true if another process may have written since (see ``FileLock/lock(_:)``
    /// and ``SharedMemoryLock/lock(_:)``).
    func lock(_ kind: LockKind) throws(SystemError) -> Bool {
        switch self {
        case .file(let lock): try lock.lock(kind)
        case .sharedMemory(let lock): try lock.lock(kind)
        }
    }

    /// Takes the exclusive lock if it is free; nil if another process holds it.
    func tryLockExclusive() throws(SystemError) -> Bool? {
        switch self {
        case .file(let lock): try lock.tryLockExclusive()
        case .sharedMemory(let lock): try lock.tryLockExclusive()
        }
    }

    /// Releases one level of `kind`.
    func unlock(_ kind: LockKind) throws(SystemError) {
        switch self {
        case .file(let lock): try lock.unlock(kind)
        case .sharedMemory(let lock): try lock.unlock(kind)
        }
    }

    /// Nested exclusive levels held.
    var exclusiveCount: Int {
        switch self {
        case .file(let lock): lock.exclusiveCount
        case .sharedMemory(let lock): lock.exclusiveCount
        }
    }

    /// Settles which lock an instance opening `location` uses, given the `flock` it holds as
    /// `kind` and its mode lock; returns the lock held as `kind` (for the shared-memory lock, the
    /// `flock` is released once that lock is held). A nil `wanted` takes whichever lock the
    /// instances that share the store now use (`flock` if none does): for an internal writer
    /// such as a restore, which must join the sharers rather than choose.
    static func settle(
        _ location: StoreLocation, metaFile: FileDescriptor, flock: FileLock, kind: LockKind, sharing: Bool,
        choice wanted: ProcessLock?, canWrite: Bool
    ) throws(MappedKVError) -> StoreLock {
        guard sharing else { return .file(flock) }
        let choice: ProcessLock
        if let wanted {
            choice = wanted
        } else {
            let sharedMemoryInUse = try systemCall { () throws(SystemError) in
                try ByteRangeLock.isLockedByOthers(metaFile, offset: sharedMemorySharerByte, length: 1)
            }
            choice = sharedMemoryInUse ? .sharedMemory : .flock
        }
        let (own, other) =
            choice == .sharedMemory
            ? (sharedMemorySharerByte, flockSharerByte) : (flockSharerByte, sharedMemorySharerByte)
        let conflict = try systemCall { () throws(SystemError) in
            try ByteRangeLock.isLockedByOthers(metaFile, offset: other, length: 1)
        }
        if conflict { throw .modeConflict(id: location.id, reason: conflictReason(location, metaFile, wanted: choice)) }
        // Shown to later openers before the flock can be released below. Nobody holds the byte
        // exclusively (it is only ever probed), so this cannot fail; closing the file releases it.
        _ = try systemCall { () throws(SystemError) in
            try ByteRangeLock.tryLock(metaFile, offset: own, length: 1, kind: .shared)
        }
        switch choice {
        case .flock:
            // No process shares it through the lock file: the store is back under MMKV's protocol.
            if canWrite { try systemCall { () throws(SystemError) in try FileDescriptor.remove(location.lockPath) } }
            return .file(flock)
        case .sharedMemory:
            let shared = try systemCall { () throws(SystemError) in try SharedMemoryLock.open(location.lockPath) }
            _ = try systemCall { () throws(SystemError) in
                try shared.lock(kind)
                try flock.unlock(kind)
            }
            return .sharedMemory(shared)
        }
    }

    /// Takes the shared-memory lock of `location` as `kind` if the store has one, for a process
    /// that locks the store without opening it (``DetachedStoreLock``); call it holding the
    /// `flock`, under which the lock file is only ever created or removed.
    static func sharedMemoryLockIfPresent(
        _ location: StoreLocation, kind: LockKind
    ) throws(MappedKVError) -> SharedMemoryLock? {
        guard Directory.fileExists(location.lockPath) else { return nil }
        return try systemCall { () throws(SystemError) in
            let shared = try SharedMemoryLock.open(location.lockPath)
            _ = try shared.lock(kind)
            return shared
        }
    }

    private static func conflictReason(
        _ location: StoreLocation, _ metaFile: FileDescriptor, wanted: ProcessLock
    ) -> String {
        let who = FileHolders.describe(holding: metaFile.path)
        switch wanted {
        case .flock:
            return "\(who) shares it through the shared-memory lock (\(location.lockPath)), which "
                + "MMKV's flock protocol cannot join: open it with processLock: .sharedMemory "
                + "(CLI: --lock shared-memory) in every process, or close it there first"
        case .sharedMemory:
            return "\(who) shares it through flock (MMKV's protocol), which the shared-memory lock cannot join: "
                + "open it with processLock: .flock (the default) in every process, or close it there first"
        }
    }
}
