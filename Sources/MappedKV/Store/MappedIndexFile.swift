import Logging
import MappedKVFormat
import MappedKVIO

/// An index file mapped read-only, whose buckets a store in mapped mode probes where they lie
/// (docs/FORMAT.md 12.5), shared through the page cache with every process that maps it.
///
/// Writers never change an index file in place: they write a new one and rename it over the old
/// (``IndexFile/write(_:key:to:logger:)``), so the file this maps never changes under it and stays
/// valid until it is unmapped, whatever is written after.
final class MappedIndexFile {
    let header: IndexFileHeader
    private let region: MappedRegion
    /// The buckets, in the mapping.
    let buckets: UnsafeBufferPointer<KeyIndex.Entry>
    /// How far a hash is shifted right to give its home bucket (as ``KeyIndex`` computes it).
    let homeShift: UInt32
    let hasher: KeyHasher

    private init(header: IndexFileHeader, region: MappedRegion) {
        self.header = header
        self.region = region
        let count = Int(header.bucketCount)
        let bytes = UnsafeRawBufferPointer(region.bytes)
        if count > 0, let base = bytes.baseAddress {
            buckets = UnsafeBufferPointer(
                start: (base + IndexFileHeader.bucketsOffset).assumingMemoryBound(to: KeyIndex.Entry.self),
                count: count)
        } else {
            buckets = UnsafeBufferPointer(start: nil, count: 0)
        }
        homeShift = count > 1 ? 31 - UInt32(truncatingIfNeeded: count.trailingZeroBitCount) : 31
        hasher = KeyHasher(seed: header.seed)
    }

    /// Maps the plain store's index file at `path`, if its header parses and the file is whole;
    /// the caller checks that it describes the store.
    static func map(_ path: String, logger: Logger) -> MappedIndexFile? {
        #if _endian(big)
        return nil
        #else
        guard Directory.fileExists(path) else { return nil }
        do throws(SystemError) {
            let file = try FileDescriptor.open(path, access: .readOnly)
            defer { file.close() }  // the mapping outlives the descriptor
            let size = try file.size()
            guard size >= IndexFileHeader.size else { return nil }
            let region = try MappedRegion(file: file, length: size, writable: false)
            let header: IndexFileHeader
            do throws(IndexFileHeader.Rejection) {
                header = try IndexFileHeader(parsing: UnsafeRawBufferPointer(region.bytes))
            } catch {
                logger.notice("index file not used", metadata: ["path": "\(path)", "reason": "\(error)"])
                return nil
            }
            guard size == header.fileSize, !header.flags.contains(.encrypted) else { return nil }
            return MappedIndexFile(header: header, region: region)
        } catch {
            logger.notice("index file not mapped", metadata: ["path": "\(path)", "error": "\(error)"])
            return nil
        }
        #endif
    }

    /// Whether the bucket bytes' CRC is the header's.
    func bucketsMatchCRC() -> Bool {
        CRC32.update(0, UnsafeRawBufferPointer(buckets)) == header.bucketsCRC
    }

    /// The slot of `key` among the buckets, reading records from `region`, or nil if absent.
    @inline(__always)
    func slot(for key: UnsafeRawBufferPointer, in region: UnsafeRawBufferPointer) -> ValueSlot? {
        guard !buckets.isEmpty else { return nil }
        let full = hasher.hash(key)
        let hash = UInt32(truncatingIfNeeded: full ^ (full >> 32)) & KeyIndex.hashMask
        let home = Int(truncatingIfNeeded: hash &>> homeShift)
        let (position, found) = KeyIndex.probe(buckets, from: home, for: key, hash: hash, in: region)
        guard found else { return nil }
        return KeyIndex.slot(of: buckets[position], in: region)
    }
}
