import Synchronization

/// One write a store makes to its files, in the order it makes them: what a process killed at
/// that moment has, or has not yet, left in the page cache.
///
/// Multi-byte stores into a mapping (``data(offset:bytes:)``, ``meta(offset:bytes:)``) may be cut
/// anywhere by a kill; a single aligned 4-byte store cannot.
package enum FileWrite: Equatable, Sendable {
    /// Bytes stored into the data file's mapping at a file offset.
    case data(offset: Int, bytes: [UInt8])
    /// The data file's size changed (grown with zeros or truncated).
    case dataSize(Int)
    /// Bytes stored into the meta file's mapping at a file offset.
    case meta(offset: Int, bytes: [UInt8])
    /// The meta file's size changed.
    case metaSize(Int)
    /// The write-back journal was written whole (replacing any earlier one).
    case journal([UInt8])
    /// The write-back journal was deleted.
    case journalRemoved
    /// A file was flushed to disk: writes before this survive a power loss. For the directory,
    /// the files it names (the journal's creation or removal) do.
    case sync(StoreFile)
    /// Bytes written at an offset to a file of a layer on top (a cache's value file), named by its
    /// path relative to the store's directory; the file is created if missing.
    case file(String, offset: Int, bytes: [UInt8])
    /// Such a file was renamed (replacing any file at the new name).
    case renamed(String, to: String)
    /// Such a file was deleted.
    case removed(String)
    /// Such a file's bytes were flushed to disk.
    case syncFile(String)
    /// A folder, relative to the store's directory, was flushed: the names in it survive.
    case syncFolder(String)

    /// The files of a store, and the directory that names them.
    package enum StoreFile: Sendable { case data, meta, journal, directory }
}

/// Collects the writes a store makes to its files, for the crash-simulation tests; a layer on
/// top (the disk cache) records the writes to its own files in the same log, so that one
/// timeline orders them all.
///
/// A recorder registered for a data file's path is picked up by every later open of that path
/// in this process. With none registered, an open pays one relaxed atomic load (no lock) and a
/// store one nil check per write.
package final class WriteRecorder: Sendable {
    private let log = Mutex<[FileWrite]>([])
    private static let registry = Mutex<[String: WriteRecorder]>([:])
    /// How many recorders are registered: read without the registry's lock on every open.
    private static let registeredCount = Atomic<Int>(0)

    /// The error number that flushes of recorded stores fail with, 0 for none: how the tests
    /// make `msync` report `EIO` or `ENOSPC`, which a real disk does only when it fails.
    package let flushFailure = Atomic<Int32>(0)

    package init() {}

    /// The writes so far, oldest first.
    package var writes: [FileWrite] { log.withLock { $0 } }

    /// How many writes were recorded so far.
    package var count: Int { log.withLock { $0.count } }

    /// Appends one write.
    package func record(_ write: FileWrite) { log.withLock { $0.append(write) } }

    /// Records every write of stores opened at `dataPath` from now on.
    package static func register(_ recorder: WriteRecorder, for dataPath: String) {
        registry.withLock { registry in
            if registry.updateValue(recorder, forKey: dataPath) == nil {
                registeredCount.add(1, ordering: .releasing)
            }
        }
    }

    /// Stops recording stores opened at `dataPath`.
    package static func unregister(_ dataPath: String) {
        registry.withLock { registry in
            if registry.removeValue(forKey: dataPath) != nil { registeredCount.subtract(1, ordering: .releasing) }
        }
    }

    /// The recorder for a store opened at `dataPath`, if any.
    package static func recorder(for dataPath: String) -> WriteRecorder? {
        guard registeredCount.load(ordering: .acquiring) > 0 else { return nil }
        return registry.withLock { $0[dataPath] }
    }
}
