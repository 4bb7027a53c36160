import Foundation
import Glibc
import MappedKV

/// What the index file adds to a multi-process compaction: the same compaction timed with the
/// file on and off, in the same round, in alternating order.
///
/// A sample, in a fresh copy of the built store: open it in this process (multi-process, the
/// mode's lock, the index file on or off; untimed), overwrite every tenth key (untimed), flush
/// every file of the copy to the disk (untimed, so that the compaction's own flushes do not also
/// write back the copy and the overwrites), then `trim()`, a full write-back, timed. With the file
/// on, the write-back writes the index file under the exclusive lock and renames it over the one
/// the open wrote; with it off, nothing reads or writes that file.
enum OpenScalingCompaction {
    /// The (on, off) pairs per round; the pairs alternate which goes first.
    static let pairs = 2

    /// One round's pairs: nanoseconds with the index file on and off.
    static func measure(
        keys: [String], n: Int, directory: String, round: Int
    ) throws -> [(on: Double, off: Double)] {
        try (0..<pairs).map { pair in
            if (round + pair) % 2 == 0 {
                let on = try sample(OpenScalingIndexFileOnVariant.self, keys: keys, n: n, directory: directory)
                let off = try sample(OpenScalingIndexFileOffVariant.self, keys: keys, n: n, directory: directory)
                return (on, off)
            }
            let off = try sample(OpenScalingIndexFileOffVariant.self, keys: keys, n: n, directory: directory)
            let on = try sample(OpenScalingIndexFileOnVariant.self, keys: keys, n: n, directory: directory)
            return (on, off)
        }
    }

    /// One compaction in a copy of the store in `directory`, timed. Nanoseconds.
    @inline(never)
    private static func sample<V: OpenScalingMappedKVVariant>(
        _: V.Type, keys: [String], n: Int, directory: String
    ) throws -> Double {
        let usesIndexFile = V.configuration.usesIndexFile
        let copy = "\(directory)-compaction-\(usesIndexFile ? "on" : "off")"
        try Scratch.remove(copy)
        try FileManager.default.copyItem(atPath: directory, toPath: copy)
        defer { try? Scratch.remove(copy) }
        let indexPath = try StoreLocation(id: MappedKVStore<V>.storeID, directory: copy).indexPath
        if !usesIndexFile { try? FileManager.default.removeItem(atPath: indexPath) }

        let store = try MappedKVStore<V>(directory: copy)
        defer { try? store.close() }
        for i in stride(from: 0, to: n, by: OpenScalingChild.overwriteStride) {
            try store.setInt32(OpenScalingChild.overwrittenValue(i), forKey: keys[i])
        }
        try flush(copy)
        let before = try? inode(indexPath)
        let elapsed = try Clock.measure { try store.writeBack() }

        let index = (n - 1) / OpenScalingChild.overwriteStride * OpenScalingChild.overwriteStride
        guard try store.int32(forKey: keys[index]) == OpenScalingChild.overwrittenValue(index) else {
            throw BenchError("MappedKV: after the compaction \(keys[index]) does not hold its overwritten value")
        }
        let after = try? inode(indexPath)
        if usesIndexFile, after == nil || after == before {
            throw BenchError("MappedKV: the compaction did not replace the index file \(indexPath)")
        }
        if !usesIndexFile, after != nil {
            throw BenchError("MappedKV: a store without the index file wrote \(indexPath)")
        }
        return elapsed
    }

    /// Writes every regular file directly in `directory` to the disk.
    private static func flush(_ directory: String) throws {
        for name in try FileManager.default.contentsOfDirectory(atPath: directory) {
            let fd = open("\(directory)/\(name)", O_RDONLY | O_CLOEXEC)
            guard fd >= 0 else { throw BenchError("cannot open \(directory)/\(name): errno \(errno)") }
            defer { close(fd) }
            guard fsync(fd) == 0 else { throw BenchError("cannot flush \(directory)/\(name): errno \(errno)") }
        }
    }

    private static func inode(_ path: String) throws -> Int? {
        try FileManager.default.attributesOfItem(atPath: path)[.systemFileNumber] as? Int
    }
}

/// The compaction's store with the index file: multi-process, with the lock of
/// ``OpenScalingMode/current``, encrypted as `--encrypted` says, whatever `--index-file` says.
enum OpenScalingIndexFileOnVariant: OpenScalingMappedKVVariant {
    static let configuration = Configuration(
        isMultiProcess: true, cryptKey: EncryptionOption.key, processLock: OpenScalingMode.current.processLock,
        metrics: BenchMetrics.options, usesIndexFile: true)
}

/// The compaction's store without the index file, otherwise as ``OpenScalingIndexFileOnVariant``.
enum OpenScalingIndexFileOffVariant: OpenScalingMappedKVVariant {
    static let configuration = Configuration(
        isMultiProcess: true, cryptKey: EncryptionOption.key, processLock: OpenScalingMode.current.processLock,
        metrics: BenchMetrics.options, usesIndexFile: false)
}
