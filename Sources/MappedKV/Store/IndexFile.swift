import Logging
import MappedKVCrypto
import MappedKVFormat
import MappedKVIO

/// A store's index file, `<data file>.index` (docs/FORMAT.md section 12): a snapshot of the
/// ``KeyIndex`` of one log state, so that an open can adopt the index instead of decoding the log.
///
/// The file is derived data. It is written whole to a temporary name and renamed into place, so
/// a reader sees an old snapshot or a new one, never half of one; a missing, damaged, foreign or
/// stale file costs an open the decode it would have done anyway, never a wrong value
/// (``IndexedLoad`` states what is checked before the buckets are used).
enum IndexFile {
    /// What a snapshot is written from: a store's index and the log state it describes.
    struct Snapshot {
        var index: KeyIndex
        var stamp: MetaStamp
        var dataHeader: UInt32
        var recordCount: Int
        var expiryEnabled: Bool
        var identity: FileIdentity
        /// When the data file last changed, and the CRC of the meta's struct, as the writer sees them now.
        var unchangedSince: (dataModified: UInt64, metaStructCRC: UInt32)?
    }

    /// The secrets an encrypted store's file is written with: a mask that hides the hash seed
    /// (so that the file does not let anyone test guesses of key names against the hashes) and
    /// a check value that tells a wrong key.
    struct KeySecrets: Equatable {
        var seedMask: UInt64
        var keyCheck: UInt64

        /// The secrets of `key`: the first 8 bytes of AES under the key of two fixed blocks.
        init(_ key: CryptKey) throws(CryptoFailure) {
            seedMask = try Self.derive(key, label: Array("MappedKV idx mask".utf8.prefix(16)))
            keyCheck = try Self.derive(key, label: Array("MappedKV idx chk.".utf8.prefix(16)))
        }

        /// The first 8 bytes of the AES encryption of `label` (16 bytes) under `key`: CFB over one
        /// zero block with `label` as IV gives exactly that block.
        private static func derive(_ key: CryptKey, label: [UInt8]) throws(CryptoFailure) -> UInt64 {
            let stream = try CFBStream(key: key.aesKey, iv: label)
            var block = [UInt8](repeating: 0, count: 16)
            try stream.encrypt(&block)
            return block.withUnsafeBytes { UInt64(littleEndian: $0.loadUnaligned(as: UInt64.self)) }
        }
    }

    /// The hash seed of the file whose header is `header`, if it was written with `key` (or, for a
    /// plain store, without one): for an encrypted store the stored seed unmasked (FORMAT.md 12.2).
    /// Nil for a file written with another key, or none: it is never used, and the decoding open
    /// then tells the wrong key.
    static func seed(of header: IndexFileHeader, key: CryptKey?) throws(CryptoFailure) -> UInt64? {
        guard header.flags.contains(.encrypted) == (key != nil) else { return nil }
        guard let key else { return header.seed }
        let secrets = try KeySecrets(key)
        return header.keyCheck == secrets.keyCheck ? header.seed ^ secrets.seedMask : nil
    }

    /// Writes `snapshot` to `path`; returns false if it could not, which is logged and leaves any
    /// earlier file in place (its stamp keeps it from being trusted for a later state). A
    /// `recorder` (the crash-simulation tests') gets the file's bytes and its rename.
    @discardableResult
    static func write(
        _ snapshot: Snapshot, key: CryptKey?, to path: String, recorder: WriteRecorder? = nil, logger: Logger
    ) -> Bool {
        #if _endian(big)
        return false
        #else
        var header = IndexFileHeader()
        do throws(CryptoFailure) {
            let secrets = try key.map { (key) throws(CryptoFailure) in try KeySecrets(key) }
            var flags: IndexFileHeader.Flags = []
            if snapshot.expiryEnabled { flags.insert(.keyExpiry) }
            if key != nil { flags.insert(.encrypted) }
            header.flags = flags
            header.seed = snapshot.index.hasher.storedSeed ^ (secrets?.seedMask ?? 0)
            header.keyCheck = secrets?.keyCheck ?? 0
        } catch {
            logger.warning("index file not written", metadata: ["path": "\(path)", "error": "\(error)"])
            return false
        }
        header.bootID = BootIdentity.current ?? Array(repeating: 0, count: 16)
        header.dataDevice = snapshot.identity.device
        header.dataInode = snapshot.identity.inode
        header.stamp = snapshot.stamp
        header.dataHeader = snapshot.dataHeader
        header.bucketCount = UInt64(snapshot.index.entries.count)
        header.keyCount = UInt64(snapshot.index.count)
        header.repairedKeyCount = UInt64(snapshot.index.repairedCount)
        header.recordBytes = UInt64(snapshot.index.recordBytes)
        header.recordCount = UInt64(snapshot.recordCount)
        header.bucketsCRC = snapshot.index.entries.withUnsafeBytes { CRC32.update(0, $0) }
        header.dataModified = snapshot.unchangedSince?.dataModified ?? 0
        header.metaStructCRC = snapshot.unchangedSince?.metaStructCRC ?? 0
        var front = header.serialized()
        front.append(contentsOf: repeatElement(0, count: IndexFileHeader.bucketsOffset - front.count))
        let temporary = "\(path).\(ProcessIdentity.current.processID).tmp"
        do throws(SystemError) {
            let file = try FileDescriptor.open(temporary, access: .writeTruncate)
            defer { file.close() }
            let pageCRCs = snapshot.index.entries.withUnsafeBytes { Self.pageCRCs(of: $0) }
            try front.withRawBytes { (head) throws(SystemError) in
                try snapshot.index.entries.withUnsafeBytes { buckets in
                    pageCRCs.withUnsafeBytes { crcs in
                        Result { () throws(SystemError) in try file.write([head, buckets, crcs], at: 0) }
                    }
                }.get()
            }
            if let recorder {
                let name = { (path: String) in String(path.split(separator: "/").last ?? "") }
                var bytes = front
                snapshot.index.entries.withUnsafeBytes { bytes.append(contentsOf: $0) }
                pageCRCs.withUnsafeBytes { bytes.append(contentsOf: $0) }
                recorder.record(.file(name(temporary), offset: 0, bytes: bytes))
                recorder.record(.renamed(name(temporary), to: name(path)))
            }
            // A rename that drops the old file's last reference frees that file in time that grows
            // with its size, here under the exclusive lock of a multi-process rewrite; held open,
            // it is freed on a thread of its own instead.
            let replaced = ReplacedFile(at: path)
            try Directory.rename(temporary, to: path)
            replaced?.releaseInBackground()
            return true
        } catch {
            try? FileDescriptor.remove(temporary)
            logger.warning("index file not written", metadata: ["path": "\(path)", "error": "\(error)"])
            return false
        }
        #endif
    }

    /// The CRC-32 of each ``IndexFileHeader/bucketPageSize`` bytes of `buckets`, little-endian.
    static func pageCRCs(of buckets: UnsafeRawBufferPointer) -> [UInt32] {
        stride(from: 0, to: buckets.count, by: IndexFileHeader.bucketPageSize).map { start in
            let end = min(start + IndexFileHeader.bucketPageSize, buckets.count)
            return CRC32.update(0, UnsafeRawBufferPointer(rebasing: buckets[start..<end])).littleEndian
        }
    }

    /// The header in `bytes` (the file's start) if it parses and says the file is `fileSize`
    /// bytes long, as a whole file of this version is; nil otherwise, with the reason logged.
    static func checkedHeader(
        _ bytes: UnsafeRawBufferPointer, fileSize: Int, path: String, logger: Logger
    ) -> IndexFileHeader? {
        let header: IndexFileHeader
        do throws(IndexFileHeader.Rejection) {
            header = try IndexFileHeader(parsing: bytes)
        } catch {
            logger.notice("index file not used", metadata: ["path": "\(path)", "reason": "\(error)"])
            return nil
        }
        guard fileSize == header.fileSize else {
            logger.notice(
                "index file not used",
                metadata: ["path": "\(path)", "reason": "it is \(fileSize) bytes, its header says \(header.fileSize)"])
            return nil
        }
        return header
    }

    /// An open index file whose header parsed: the buckets are read only once the header has
    /// shown that they describe the store as it is (``IndexedLoad``).
    final class Reader {
        let header: IndexFileHeader
        private let file: FileDescriptor
        private let path: String

        private init(header: IndexFileHeader, file: FileDescriptor, path: String) {
            self.header = header
            self.file = file
            self.path = path
        }

        deinit { file.close() }

        /// The file at `path` if it is a whole index file of this version with an undamaged
        /// header; nil for a missing, short, damaged or foreign one, with the reason logged.
        static func open(_ path: String, logger: Logger) -> Reader? {
            #if _endian(big)
            return nil
            #else
            guard Directory.fileExists(path) else { return nil }
            do throws(SystemError) {
                let file = try FileDescriptor.open(path, access: .readOnly)
                let front = try file.read(count: IndexFileHeader.size, at: 0)
                let size = try file.size()
                guard
                    let header = front.withUnsafeBytes({ checkedHeader($0, fileSize: size, path: path, logger: logger) }
                    )
                else {
                    file.close()
                    return nil
                }
                return Reader(header: header, file: file, path: path)
            } catch {
                logger.notice("index file not read", metadata: ["path": "\(path)", "error": "\(error)"])
                return nil
            }
            #endif
        }

        /// The buckets, if they are all there and their CRC is the header's.
        func buckets(logger: Logger) -> [KeyIndex.Entry]? {
            let count = Int(header.bucketCount)
            var buckets = [KeyIndex.Entry](repeating: .empty, count: count)
            do throws(SystemError) {
                let read = try buckets.withUnsafeMutableBytes { bytes in
                    Result { () throws(SystemError) in try file.read(into: bytes, at: IndexFileHeader.bucketsOffset) }
                }.get()
                guard read == count * IndexFileHeader.bucketSize,
                    buckets.withUnsafeBytes({ CRC32.update(0, $0) }) == header.bucketsCRC
                else {
                    logger.notice(
                        "index file not used", metadata: ["path": "\(path)", "reason": "its buckets' CRC differs"])
                    return nil
                }
                return buckets
            } catch {
                logger.notice("index file not read", metadata: ["path": "\(path)", "error": "\(error)"])
                return nil
            }
        }
    }

    /// Removes the file at `path` and the temporary files of writers that died writing it.
    static func remove(_ path: String) throws(SystemError) {
        if Directory.fileExists(path) { try FileDescriptor.remove(path) }
        let directory = path.split(separator: "/", omittingEmptySubsequences: false).dropLast().joined(separator: "/")
        let name = String(path.split(separator: "/").last ?? "")
        for entry in (try? Directory.entries(directory.isEmpty ? "." : directory)) ?? []
        where entry.hasPrefix(name + ".") && entry.hasSuffix(".tmp") {
            try FileDescriptor.remove((directory.isEmpty ? "" : directory + "/") + entry)
        }
    }
}
