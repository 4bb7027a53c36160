import Logging
import MappedKVCrypto
import MappedKVFormat
import MappedKVIO

/// A load that adopts the index file's buckets instead of decoding the log (docs/FORMAT.md 12.3).
///
/// It trusts the file only as far as a running process trusts its own memory: the file describes
/// a log state (sequence, CRC and size) that was verified when the file was written, and the meta
/// must still show that state, or that state with records appended after it, whose bytes must
/// extend the CRC to the meta's, as another process's appends must (6.3). Anything else, and every
/// doubt about the file itself, returns nil, and the caller decodes the log as it always did.
///
/// What the file saves is the decode, the sort and the filling of the table; the region's CRC is
/// still checked at every open, as a strict load checks it.
enum IndexedLoad {
    /// How the last load of a store went, for tests and the inspector.
    enum Outcome: Equatable {
        /// The index file described the meta's state exactly.
        case adopted
        /// The index file described an earlier state of the same sequence; this many records were decoded after it.
        case adoptedWithTail(records: Int)
        /// The log was decoded (no usable index file, or the index file is off).
        case decoded
        /// The store reads through its mappings (``MappedOpen``): nothing was copied or decoded
        /// but the records written after the file's state.
        case mapped
    }

    /// The state of `files` built from the index file at `path`, or nil if the file cannot be
    /// used for the store as it is now.
    static func load(
        _ files: StoreFiles, key: CryptKey?, path: String, logger: Logger
    ) -> (state: StoreLoader.LoadedState, outcome: Outcome)? {
        guard let reader = IndexFile.Reader.open(path, logger: logger) else { return nil }
        let header = reader.header
        func reject(_ reason: String) -> (state: StoreLoader.LoadedState, outcome: Outcome)? {
            logger.debug("index file not used", metadata: ["path": "\(path)", "reason": "\(reason)"])
            return nil
        }
        let meta = LoadAssessment.parseMeta(files.metaFileBytes).normalized
        let stamp = files.metaStamp()
        let dataFile = files.dataFileBytes
        let dataHeader = RegionValidator.header(of: dataFile)
        let seed: UInt64?
        do throws(CryptoFailure) {
            seed = try IndexFile.seed(of: header, key: key)
        } catch {
            return reject("the key's check value could not be computed: \(error)")
        }

        guard files.identity.device == header.dataDevice, files.identity.inode == header.dataInode else {
            return reject("it was written for another data file")
        }
        guard let seed else { return reject("it was written with another key, or none") }
        let expiryEnabled = meta.version >= .flag && meta.flags.contains(.keyExpiry)
        guard header.flags.contains(.keyExpiry) == expiryEnabled else { return reject("the expiry flag differs") }
        guard meta.holdsActualSize, RegionValidator.actualSize(meta: meta, header: dataHeader) == Int(stamp.actualSize)
        else { return reject("the meta does not hold the region's size") }

        let indexedSize = Int(header.stamp.actualSize)
        let size = Int(stamp.actualSize)
        guard header.stamp.sequence == stamp.sequence, size >= indexedSize, 4 + size <= dataFile.count else {
            return reject("the log was rewritten since (\(header.stamp) against \(stamp))")
        }
        guard size > indexedSize || (header.stamp == stamp && header.dataHeader == dataHeader) else {
            return reject("the log differs from the state it describes (\(header.stamp) against \(stamp))")
        }
        let stored = UnsafeRawBufferPointer(rebasing: dataFile[4..<(4 + size)])
        // The region's CRC is checked as a strict load checks it, so that adopting the index
        // weakens nothing an open verifies: damage to the data since the file was written is
        // found here and handled by the decoding load.
        let prefix = UnsafeRawBufferPointer(rebasing: stored[0..<indexedSize])
        guard CRC32.update(0, prefix) == header.stamp.crcDigest else {
            return reject("the region's CRC differs from the one the index describes")
        }
        if size > indexedSize {
            let tail = UnsafeRawBufferPointer(rebasing: stored[indexedSize..<size])
            guard CRC32.update(header.stamp.crcDigest, tail) == stamp.crcDigest else {
                return reject("the appended records do not extend the CRC to the meta's")
            }
        }
        guard let buckets = reader.buckets(logger: logger) else { return nil }
        guard let checked = checkedCounts(buckets, header: header, indexedSize: indexedSize) else {
            return reject("its buckets disagree with its header")
        }

        var plain = MirrorBuffer.make(copying: stored, capacity: dataFile.count - 4)
        let cipher: CFBStream?
        do throws(CryptoFailure) {
            cipher = try key.map { (key) throws(CryptoFailure) in try meta.regionStream(for: key) }
            if let cipher { try cipher.decrypt(&plain) }
        } catch {
            return reject("the region could not be decrypted: \(error)")
        }
        var index = KeyIndex(
            restoring: buckets, hasher: KeyHasher(seed: seed),
            count: checked.keys, repairedCount: checked.repaired, recordBytes: Int(header.recordBytes))
        var recordCount = Int(header.recordCount)
        var outcome = Outcome.adopted
        if size > indexedSize {
            let (summary, _) = index.decodeRecords(of: plain, from: indexedSize)
            guard summary.error == nil else { return reject("the appended records do not decode") }
            recordCount += summary.recordCount
            outcome = .adoptedWithTail(records: summary.recordCount)
        }
        let region = SoundRegion(
            meta: meta, header: dataHeader, plain: plain, index: index, recordCount: recordCount, cipher: cipher,
            repair: nil)
        return (StoreLoader.LoadedState(region: region, stamp: stamp), outcome)
    }

    /// The keys and repaired keys the buckets hold, if they agree with the header, leave a
    /// quarter of the table empty (a probe always ends) and point inside the indexed region.
    private static func checkedCounts(
        _ buckets: [KeyIndex.Entry], header: IndexFileHeader, indexedSize: Int
    ) -> (keys: Int, repaired: Int)? {
        var keys = 0
        var repaired = 0
        var inside = true
        for bucket in buckets where !bucket.isEmpty {
            keys += 1
            if bucket.isRepaired { repaired += 1 }
            inside = inside && bucket.recordStart < indexedSize
        }
        guard inside, keys == header.keyCount, repaired == header.repairedKeyCount, keys <= buckets.count / 4 * 3
        else { return nil }
        return (keys, repaired)
    }
}
