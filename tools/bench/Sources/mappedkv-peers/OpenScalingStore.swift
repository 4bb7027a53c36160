import ArgumentParser
import Foundation
import MappedKV

/// A store the open-scaling bench drives itself, in this process and in its children: the
/// ``BenchStore`` adapters of the peer comparison (the same opens, sets and gets), plus what a
/// writer does after overwriting keys.
protocol OpenScalingStore: BenchStore {
    /// What the bench's parent and children call this store on the command line.
    static var kind: OpenScalingKind { get }

    /// Makes the writes so far one compact store, as a writer process would before it exits:
    /// MappedKV's `trim()`, a full write-back; LMDB has no such step (a commit is final).
    func writeBack() throws

    /// Makes a copy of the store's files in `directory` (new files, so new inodes) the store the
    /// original was, for the reader that times its catch-up there.
    static func adoptCopy(directory: String) throws
}

/// The stores the bench drives itself; MMKV runs in an external driver (``MMKVDriver``).
enum OpenScalingKind: String, CaseIterable, ExpressibleByArgument {
    case mappedkv, lmdb

    var displayName: String {
        switch self {
        case .mappedkv: "MappedKV"
        case .lmdb: "LMDB"
        }
    }
}

extension MappedKVStore: OpenScalingStore where Variant: OpenScalingMappedKVVariant {
    static var kind: OpenScalingKind { .mappedkv }

    func writeBack() throws { try store.trim() }

    /// The index file names the data file's device and inode, so a copy's index file describes
    /// another file and no open adopts or maps it. One open and close rewrites it for the copy
    /// (the open decodes the log and writes it); the index file's inode must then have changed,
    /// since a writer renames a new file over it.
    static func adoptCopy(directory: String) throws {
        guard IndexFileOption.current == .on else { return }
        let path = try StoreLocation(id: storeID, directory: directory).indexPath
        let before = try inode(path)
        try Self(directory: directory).close()
        guard try inode(path) != before else {
            throw BenchError("MappedKV: an open and close of the copy in \(directory) left its index file as copied")
        }
    }

    private static func inode(_ path: String) throws -> Int? {
        (try? FileManager.default.attributesOfItem(atPath: path))?[.systemFileNumber] as? Int
    }
}

extension LMDBStore: OpenScalingStore {
    static var kind: OpenScalingKind { .lmdb }

    func writeBack() throws {}

    static func adoptCopy(directory: String) throws {}
}
