/// The file-per-entry design of PINDiskCache, written here in Swift: one file per key in one
/// directory, named by the key's hash (``KeyHash``), and an in-memory index from file name to the
/// value's size and dates, built at open by listing the directory (`readdir` and one `fstatat` per
/// file, whose modification time stands for both dates).
///
/// A set writes the value to `<name>.tmp` and renames it over `<name>`, then records the size and
/// the time in the index; a get reads the whole file and moves the entry's access date in the index
/// (in memory only: nothing is written on a get). Nothing is fsynced. A trim sorts the index by
/// access date and unlinks the oldest files; the statistics count the index and sum its sizes.
final class FilePerEntryCache: BenchDiskCache {
    private struct Entry {
        var size: Int
        var modified: Int64
        var accessed: Int64
    }

    private static let temporarySuffix = ".tmp"
    private let directory: CacheDirectory
    private var index: [String: Entry] = [:]

    init(directory path: String) throws {
        directory = try CacheDirectory(path)
        do {
            for file in try directory.list() {
                if file.name.hasSuffix(Self.temporarySuffix) {
                    // A write that never got renamed into place.
                    try directory.remove(file.name)
                    continue
                }
                index[file.name] = Entry(size: file.size, modified: file.modified, accessed: file.modified)
            }
        } catch {
            directory.close()
            throw error
        }
    }

    @inline(__always)
    func set(_ value: [UInt8], forKey key: String) throws {
        let name = KeyHash.fileName(key)
        try value.withUnsafeBytes { bytes in
            try directory.write(bytes, to: name, through: name + Self.temporarySuffix)
        }
        let now = WallClock.nanoseconds()
        index[name] = Entry(size: value.count, modified: now, accessed: now)
    }

    @inline(__always)
    func value(forKey key: String) throws -> [UInt8]? {
        let name = KeyHash.fileName(key)
        guard index[name] != nil else { return nil }
        guard let value = try directory.read(name) else {
            // Removed behind the cache's back: forget it.
            index[name] = nil
            return nil
        }
        index[name]?.accessed = WallClock.nanoseconds()
        return value
    }

    func trim(toCount count: Int) throws {
        guard index.count > count else { return }
        let oldest = index.sorted { $0.value.accessed < $1.value.accessed }.prefix(index.count - count)
        for (name, _) in oldest {
            try directory.remove(name)
            index[name] = nil
        }
    }

    func statistics() throws -> CacheTotals {
        var bytes = 0
        for entry in index.values { bytes += entry.size }
        return CacheTotals(count: index.count, bytes: bytes)
    }

    func close() throws { directory.close() }
}
