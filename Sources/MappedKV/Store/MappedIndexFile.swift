import Logging
import MappedKVFormat
import MappedKVIO

#if canImport(Glibc)
import Glibc
#endif

/// An index file mapped read-only, whose buckets a store in mapped mode probes where they lie
/// (docs/FORMAT.md 12.5), shared through the page cache with every process that maps it.
///
/// Writers never change an index file in place: they write a new one and rename it over the old
/// (``IndexFile/write(_:key:to:logger:)``), so the file this maps never changes under it and stays
/// valid until it is unmapped, whatever is written after.
///
/// The buckets are checked a page at a time, against the page CRCs after them, the first time a
/// probe reads the page (``verifiedPages``), so that an open costs the same at any size and a
/// damaged bucket is still never used.
final class MappedIndexFile {
    /// What a lookup found.
    enum Lookup {
        case found(ValueSlot)
        case absent
        /// A page of buckets the probe needed does not match its CRC: the file cannot answer.
        case damaged
    }

    let header: IndexFileHeader
    private let region: MappedRegion
    /// The path mapped and the file found there, to tell whether a writer has since replaced it.
    private let path: String
    private let identity: FileIdentity
    /// The buckets, in the mapping.
    let buckets: UnsafeBufferPointer<KeyIndex.Entry>
    /// How far a hash is shifted right to give its home bucket (as ``KeyIndex`` computes it).
    let homeShift: UInt32
    let hasher: KeyHasher
    /// The page CRCs, in the mapping.
    private let pageCRCs: UnsafeRawBufferPointer
    /// One bit per bucket page, set once the page matched its CRC (private to this process).
    private let verifiedPages: UnsafeMutableBufferPointer<UInt64>

    private init(header: IndexFileHeader, seed: UInt64, region: MappedRegion, path: String, identity: FileIdentity) {
        self.header = header
        self.region = region
        self.path = path
        self.identity = identity
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
        hasher = KeyHasher(seed: seed)
        pageCRCs = UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(region.bytes)[header.pageCRCsOffset...])
        verifiedPages = .allocate(capacity: (header.bucketPageCount + 63) / 64)
        verifiedPages.initialize(repeating: 0)
    }

    deinit { verifiedPages.deallocate() }

    /// Gives up `file`, the caller's last reference. Once a writer has replaced the file (renamed
    /// a new one over it), this mapping may hold its last reference, and the unmapping then frees
    /// its page cache in time that grows with its size; a thread of its own does that, so that the
    /// read that found the change does not wait for it (the open-scaling bench's
    /// `reader_first_get_after_compaction`).
    static func retire(_ file: consuming MappedIndexFile) {
        guard FileIdentity(path: file.path) != file.identity else { return }
        let retired = Retired(file)
        DetachedThread.runAside { retired.release() }
    }

    /// Maps the index file at `path`, if its header parses, the file is whole and it was written
    /// with `key` (or, for a plain store, none); the caller checks that it describes the store.
    static func map(_ path: String, key: CryptKey?, logger: Logger) -> MappedIndexFile? {
        #if _endian(big)
        return nil
        #else
        guard Directory.fileExists(path) else { return nil }
        do throws(SystemError) {
            let file = try FileDescriptor.open(path, access: .readOnly)
            defer { file.close() }  // the mapping outlives the descriptor
            let size = try file.size()
            guard size >= IndexFileHeader.size else { return nil }
            let identity = try FileIdentity(file)
            let region = try MappedRegion(file: file, length: size, writable: false)
            guard
                let header = IndexFile.checkedHeader(
                    UnsafeRawBufferPointer(region.bytes), fileSize: size, path: path, logger: logger),
                let seed = try? IndexFile.seed(of: header, key: key)
            else { return nil }
            return MappedIndexFile(header: header, seed: seed, region: region, path: path, identity: identity)
        } catch {
            logger.notice("index file not mapped", metadata: ["path": "\(path)", "error": "\(error)"])
            return nil
        }
        #endif
    }

    /// Whether the page of buckets that holds `bucket` matches its CRC, checking it the first time.
    // Inlined into the probe: the open-scaling bench's mapped gets at 10^4 keys.
    @inline(__always)
    private func isVerified(bucket: Int) -> Bool {
        let page = bucket &* IndexFileHeader.bucketSize / IndexFileHeader.bucketPageSize
        if verifiedPages[page &>> 6] & (1 &<< UInt64(page & 63)) != 0 { return true }
        return verify(page: page)
    }

    @inline(never)
    private func verify(page: Int) -> Bool {
        let all = UnsafeRawBufferPointer(buckets)
        let start = page * IndexFileHeader.bucketPageSize
        let end = min(start + IndexFileHeader.bucketPageSize, all.count)
        let stored = UInt32(littleEndian: pageCRCs.loadUnaligned(fromByteOffset: page * 4, as: UInt32.self))
        guard CRC32.update(0, UnsafeRawBufferPointer(rebasing: all[start..<end])) == stored else { return false }
        verifiedPages[page &>> 6] |= 1 &<< UInt64(page & 63)
        return true
    }

    /// The slot of `key` among the buckets, reading records from `plaintext`. The probe is
    /// ``KeyIndex``'s, with each page of buckets checked before it is read, and it gives up
    /// (damaged) after visiting every bucket, so that no file, however damaged, makes it loop.
    /// A record whose hash matches is prepared (decrypted, in an encrypted store) before it is
    /// read: its header and key first, its value once the key matched.
    func slot(for key: UnsafeRawBufferPointer, in plaintext: MappedPlaintext) -> Lookup {
        let region = plaintext.bytes
        guard !buckets.isEmpty, let keyBase = key.baseAddress, let regionBase = region.baseAddress else {
            return .absent
        }
        let full = hasher.hash(key)
        let hash = UInt32(truncatingIfNeeded: full ^ (full >> 32)) & KeyIndex.hashMask
        let mask = buckets.count - 1
        var position = Int(truncatingIfNeeded: hash &>> homeShift)
        guard isVerified(bucket: position) else { return .damaged }
        for _ in 0..<buckets.count {
            let entry = buckets[position]
            if entry.isEmpty { return .absent }
            if entry.tag == hash {
                // Two varints of at most ten bytes each around the key.
                let start = entry.recordStart
                guard plaintext.prepare(start..<(start + key.count + 20)) else { return .damaged }
                if let slot = KeyIndex.slot(of: entry, in: region), Int(slot.keyLength) == key.count,
                    memcmp(regionBase + Int(slot.keyStart), keyBase, key.count) == 0
                {
                    guard plaintext.prepare(slot.valueRange) else { return .damaged }
                    return .found(slot)
                }
            }
            position = (position + 1) & mask
            if position % (IndexFileHeader.bucketPageSize / IndexFileHeader.bucketSize) == 0,
                !isVerified(bucket: position)
            {
                return .damaged
            }
        }
        return .damaged
    }
}

/// A mapping handed to another thread to unmap: only that thread touches it after the handover.
private final class Retired: @unchecked Sendable {
    private var file: MappedIndexFile?
    init(_ file: MappedIndexFile) { self.file = file }
    func release() { file = nil }
}
