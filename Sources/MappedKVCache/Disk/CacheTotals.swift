import Glibc
import MappedKVIO
import Synchronization

// `totals`: how many entries a cache directory holds and how many value bytes they take, kept by
// every process as it writes, so that a set knows at once whether it took the cache past a limit.
//
// | field   | bytes | meaning                                      |
// |---------|-------|----------------------------------------------|
// | magic   | 4     | `MKVT`                                       |
// | version | 1     | 1                                            |
// | valid   | 1     | 1 once the counts were taken from the manifest |
// | (zero)  | 2     |                                              |
// | count   | 8     | entries, little-endian                       |
// | bytes   | 8     | value bytes, little-endian                   |
//
// The invariant: the file is read and written only under the manifest's exclusive lock, and each
// write of the manifest updates it in the same section, so in the absence of crashes it equals
// the manifest's entries. A process killed between its manifest append and its update leaves the
// counts off by that one entry until the next trim, which counts the manifest and writes them
// anew. A missing or unknown file is counted from the manifest at its first use; it is created
// lazily, so an open that writes nothing leaves the directory unchanged.

/// An entry count and a byte count.
struct CacheCounts: Sendable, Equatable {
    var count: Int
    var bytes: Int
}

/// The `totals` file of one cache directory, mapped once it is first used.
final class CacheTotals: Sendable {
    static let fileName = "totals"
    static let length = 24
    private static let magic: [UInt8] = Array("MKVT".utf8)
    /// ``magic``'s four bytes loaded as one word, compared with one load of the file's.
    private static let magicWord = magic.withUnsafeBytes { $0.loadUnaligned(as: UInt32.self) }

    private let path: String
    /// The mapping, once made; kept alive here until ``close()``.
    private let region = Mutex<MappedRegion?>(nil)
    /// The address of the mapping's first byte once ``region`` holds it, 0 before: a set reads it
    /// with one load, with no lock, so the update inside the manifest's locked section cannot
    /// fail and takes no mutex. (An address, as `Atomic` of a pointer is not `Sendable`.)
    private let base = Atomic<UInt>(0)

    init(directory: String) { path = directory + "/" + Self.fileName }

    /// The counts on file; `count` is called to take them from the manifest (and they are
    /// written) when the file is missing or invalid. Call it under the manifest's exclusive lock.
    func read(countingWith count: () throws(CacheError) -> CacheCounts) throws(CacheError) -> CacheCounts {
        let bytes = try mapped()
        if let counts = Self.validCounts(in: bytes) { return counts }
        let counted = try count()
        Self.store(counted, in: bytes)
        Self.markValid(bytes)
        return counted
    }

    /// Records `counts`. Call it under the manifest's exclusive lock.
    func write(_ counts: CacheCounts) throws(CacheError) {
        let bytes = try mapped()
        Self.store(counts, in: bytes)
        Self.markValid(bytes)
    }

    /// Adds `delta` to valid counts on file and returns the sum, in one go; nil, changing nothing,
    /// when the file is not mapped (see ``map()``) or holds no valid counts yet (the caller counts
    /// the manifest, see ``read(countingWith:)``). Call it under the manifest's exclusive lock.
    func add(_ delta: CacheCounts) -> CacheCounts? {
        guard let start = UnsafeMutableRawPointer(bitPattern: base.load(ordering: .acquiring)) else { return nil }
        let bytes = UnsafeMutableRawBufferPointer(start: start, count: Self.length)
        guard let counts = Self.validCounts(in: bytes) else { return nil }
        let sum = CacheCounts(count: counts.count + delta.count, bytes: counts.bytes + delta.bytes)
        Self.store(sum, in: bytes)
        return sum
    }

    /// The counts in the mapped file, if its header says they are valid.
    private static func validCounts(in bytes: UnsafeMutableRawBufferPointer) -> CacheCounts? {
        guard bytes.loadUnaligned(as: UInt32.self) == magicWord, bytes[4] == 1, bytes[5] == 1 else { return nil }
        return CacheCounts(
            count: Int(Int64(littleEndian: bytes.loadUnaligned(fromByteOffset: 8, as: Int64.self))),
            bytes: Int(Int64(littleEndian: bytes.loadUnaligned(fromByteOffset: 16, as: Int64.self))))
    }

    /// Writes `counts` (negative ones as zero) into the mapped file.
    private static func store(_ counts: CacheCounts, in bytes: UnsafeMutableRawBufferPointer) {
        bytes.storeBytes(of: Int64(max(0, counts.count)).littleEndian, toByteOffset: 8, as: Int64.self)
        bytes.storeBytes(of: Int64(max(0, counts.bytes)).littleEndian, toByteOffset: 16, as: Int64.self)
    }

    /// Writes the header that says the counts are valid.
    private static func markValid(_ bytes: UnsafeMutableRawBufferPointer) {
        for (offset, byte) in magic.enumerated() { bytes[offset] = byte }
        bytes[4] = 1
        bytes[5] = 1
    }

    /// Unmaps the file. Call it once the manifest is closed, so no locked section is left to
    /// use the mapping.
    func close() {
        region.withLock { region in
            base.store(0, ordering: .releasing)
            region = nil
        }
    }

    /// Maps the file (created at its length) if it is not mapped yet. A set calls it before the
    /// manifest's lock, so that its update under the lock (``add(_:)``) cannot fail. Creating the
    /// file outside the lock is safe: it only ever grows to its length, with zeros that no
    /// process takes for valid counts.
    func map() throws(CacheError) {
        if base.load(ordering: .acquiring) == 0 { _ = try mapped() }
    }

    /// The mapped bytes, mapping the file (created at its length) on first use.
    private func mapped() throws(CacheError) -> UnsafeMutableRawBufferPointer {
        try region.withLock { (region) throws(CacheError) -> UnsafeMutableRawBufferPointer in
            if let region { return region.bytes }
            let path = self.path
            let made = try fileCall { () throws(SystemError) -> MappedRegion in
                let file = try FileDescriptor.open(path, access: .readWriteCreate)
                defer { file.close() }
                if try file.size() < Self.length { try file.truncate(to: Self.length) }
                return try MappedRegion(file: file, length: Self.length, writable: true)
            }
            region = made
            base.store(UInt(bitPattern: made.bytes.baseAddress), ordering: .releasing)
            return made.bytes
        }
    }
}
