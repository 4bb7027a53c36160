import Synchronization

/// One write a store makes to its files, in the order it makes them: what a process killed at
/// that moment has, or has not yet, left in the page cache.
///
/// Multi-byte stores into a mapping (``data(offset:bytes:)``, ``meta(offset:bytes:)``) may be cut
/// anywhere by a kill; a single aligned 4-byte store cannot.
enum FileWrite: Equatable, Sendable {
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
    /// A file was flushed to disk: writes before this survive a power loss.
    case sync(StoreFile)

    /// The files of a store.
    enum StoreFile: Sendable { case data, meta, journal }
}

/// Collects the writes a store makes to its files, for the crash-simulation tests.
///
/// A recorder registered for a data file's path is picked up by every later open of that path
/// in this process; with none registered a store pays one nil check per write.
final class WriteRecorder: Sendable {
    private let log = Mutex<[FileWrite]>([])
    private static let registry = Mutex<[String: WriteRecorder]>([:])

    /// The writes so far, oldest first.
    var writes: [FileWrite] { log.withLock { $0 } }

    /// How many writes were recorded so far.
    var count: Int { log.withLock { $0.count } }

    /// Appends one write.
    func record(_ write: FileWrite) { log.withLock { $0.append(write) } }

    /// Records every write of stores opened at `dataPath` from now on.
    static func register(_ recorder: WriteRecorder, for dataPath: String) {
        registry.withLock { $0[dataPath] = recorder }
    }

    /// Stops recording stores opened at `dataPath`.
    static func unregister(_ dataPath: String) {
        _ = registry.withLock { $0.removeValue(forKey: dataPath) }
    }

    /// The recorder for a store opened at `dataPath`, if any.
    static func recorder(for dataPath: String) -> WriteRecorder? {
        registry.withLock { $0.isEmpty ? nil : $0[dataPath] }
    }
}
