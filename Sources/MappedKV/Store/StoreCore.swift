import Logging
import MappedKVCrypto
import MappedKVFormat
import MappedKVIO

/// The store proper: the mapped files, the plaintext mirror of the data region, and the index of live keys.
///
/// Not thread-safe: ``MappedKV`` serializes every call. The mirror is a process-private copy of
/// `data[4 ..< 4 + actualSize]`, so values are never served from the shared mapping; index slots
/// are offsets into it. Every mutation of the files goes through ``StoreFiles``.
final class StoreCore {
    let location: StoreLocation
    let configuration: Configuration
    let logger: Logger
    let pageSize: Int
    /// The data file size that `clearAll` returns to and `trim` never goes below.
    let expectedCapacity: Int

    private var files: StoreFiles?
    private var closedReason: String?
    /// The meta as this instance last wrote or verified it.
    private(set) var meta: MetaInfo
    /// The data file's header as loaded.
    private(set) var header: UInt32
    /// The plaintext data region, `[0, actualSize)`.
    private(set) var mirror: [UInt8]
    /// The live keys.
    private(set) var index: [IndexKey: ValueSlot]
    /// Records decoded at load or appended since, deletions included (for statistics).
    private(set) var recordCount: Int
    /// Whether every value carries MMKV's 4-byte expiry suffix (meta flag bit 0).
    private(set) var expiryEnabled: Bool
    /// The lifetime of values set without one, in seconds; 0 is "never" (MMKV's `m_expiredInSeconds`).
    private(set) var defaultExpiryDuration: UInt32 = 0
    /// A reusable buffer for encoding payloads, so a set allocates nothing once warm.
    private var scratch: [UInt8] = []
    /// The store's key; it changes only through ``rekey(to:)``.
    private(set) var cryptKey: CryptKey?
    /// The cipher stream positioned at the end of the region, for an encrypted store.
    private var cipher: CFBStream?

    /// Opens or creates the store and loads it strictly; nothing on disk changes if this throws.
    init(location: StoreLocation, configuration: Configuration, logger: Logger) throws(MappedKVError) {
        self.location = location
        self.configuration = configuration
        self.logger = logger
        self.pageSize = PageSize.current
        self.expectedCapacity = PageSize.roundUp(max(configuration.expectedCapacity, 0), pageSize: pageSize)

        let files = try StoreFiles.open(location, readOnly: configuration.isReadOnly)
        let storedMeta = try files.readMeta()
        let region: ValidatedRegion
        switch RegionValidator.validate(dataFile: files.dataFileBytes, storedMeta: storedMeta) {
        case .success(let valid): region = valid
        case .failure(let reason):
            logger.error("cannot open store", metadata: ["id": "\(location.id)", "reason": "\(reason)"])
            throw .corrupted(location.id, reason)
        }
        var mirror: [UInt8] = region.actualSize == 0
            ? [] : [UInt8](UnsafeRawBufferPointer(rebasing: files.dataFileBytes[4..<(4 + region.actualSize)]))
        var cipher: CFBStream?
        if let key = configuration.cryptKey {
            let iv = region.meta.version >= .randomIV ? region.meta.iv.bytes : key.legacyIV
            let stream = CFBStream(key: key, iv: iv)
            mirror.withUnsafeMutableBytes { stream.decrypt($0) }
            cipher = stream
        }
        var index: [IndexKey: ValueSlot] = [:]
        var (summary, hasNonUTF8Key) = StoreCore.buildIndex(&index, from: mirror, start: 0)
        if summary.error == nil, cipher != nil {
            // A wrong key usually breaks the framing; when it does not, the holder or the keys are noise.
            summary.error = mirror.withUnsafeBytes(RegionValidator.implausibleHolder) ?? (hasNonUTF8Key ? .invalidUTF8 : nil)
        }
        if let error = summary.error {
            logger.error("cannot decode store", metadata: ["id": "\(location.id)", "reason": "\(error)"])
            throw .corrupted(location.id, .undecodable(error))
        }
        if !configuration.isReadOnly {
            try files.ensureSizes(minimumDataSize: expectedCapacity, pageSize: pageSize)
        }
        self.files = files
        self.cryptKey = configuration.cryptKey
        self.cipher = cipher
        self.meta = region.meta
        self.header = region.header
        self.mirror = mirror
        self.index = index
        self.recordCount = summary.recordCount
        self.expiryEnabled = region.meta.version >= .flag && region.meta.flags.contains(.keyExpiry)
        logger.debug("opened store", metadata: [
            "id": "\(location.id)", "keys": "\(index.count)", "actualSize": "\(region.actualSize)",
            "fileSize": "\(files.dataFileSize)", "sequence": "\(region.meta.sequence)",
        ])
    }

    /// Decodes records of `mirror` from `start` into `index`; the last record of a key wins.
    /// Also says whether any key was not UTF-8 (such keys are indexed under their repaired string).
    static func buildIndex(
        _ index: inout [IndexKey: ValueSlot], from mirror: [UInt8], start: Int
    ) -> (summary: DecodeSummary, hasNonUTF8Key: Bool) {
        var hasNonUTF8Key = false
        let summary = mirror.withUnsafeBytes { bytes in
            RecordDecoder.decode(bytes, from: start, skipsHolder: start == 0) { record in
                let keyBytes = bytes[record.keyRange]
                let string = String(validating: keyBytes, as: UTF8.self) ?? {
                    hasNonUTF8Key = true
                    return String(decoding: keyBytes, as: UTF8.self)
                }()
                let key = IndexKey(string)
                if record.isDeletion {
                    index.removeValue(forKey: key)
                } else {
                    index[key] = ValueSlot(
                        recordStart: UInt32(record.start), valueStart: UInt32(record.valueStart),
                        valueLength: UInt32(record.valueLength))
                }
            }
        }
        return (summary, hasNonUTF8Key)
    }

    // MARK: State checks

    /// The open files, or the reason the store is closed.
    @discardableResult
    func openFiles() throws(MappedKVError) -> StoreFiles {
        guard let files else { throw .closed(closedReason ?? "the store was closed") }
        return files
    }

    private func writableFiles() throws(MappedKVError) -> StoreFiles {
        let files = try openFiles()
        guard !configuration.isReadOnly else { throw .readOnly }
        return files
    }

    /// Closes the files after an I/O failure left them in an unknown state, so nothing writes on top.
    private func poison(_ error: MappedKVError) -> MappedKVError {
        logger.error("store failed; closing it", metadata: ["id": "\(location.id)", "error": "\(error)"])
        files?.close()
        files = nil
        closedReason = "the store was closed after an I/O failure: \(error)"
        return error
    }

    var dataFileSize: Int { files?.dataFileSize ?? 0 }
    var actualSize: Int { mirror.count }

    // MARK: Reads

    /// Every live key, in no particular order.
    func keys() throws(MappedKVError) -> [String] {
        try openFiles()
        guard expiryEnabled else { return index.keys.map(\.string) }
        let now = configuration.clock.now()
        return index.compactMap { liveValueRange($0.value, now: now) == nil ? nil : $0.key.string }
    }

    /// The number of live keys.
    func count() throws(MappedKVError) -> Int {
        try openFiles()
        guard expiryEnabled else { return index.count }
        let now = configuration.clock.now()
        return index.values.reduce(0) { $0 + (liveValueRange($1, now: now) == nil ? 0 : 1) }
    }

    /// Whether `key` is live.
    func contains(_ key: String) throws(MappedKVError) -> Bool {
        try openFiles()
        return liveSlotValue(IndexKey(key)) != nil
    }

    /// The value bytes of a slot without any expiry suffix, or nil if the value has expired.
    /// A value shorter than the suffix is returned as it is, as MMKV does.
    @inline(__always)
    func liveValueRange(_ slot: ValueSlot, now: UInt32) -> Range<Int>? {
        let range = slot.valueRange
        guard expiryEnabled else { return range }
        guard let time = mirror.withUnsafeBytes({ ExpirySuffix.time(of: UnsafeRawBufferPointer(rebasing: $0[range])) }) else {
            return range
        }
        return ExpirySuffix.isExpired(time, now: now) ? nil : range.dropLast(ExpirySuffix.length)
    }

    /// The live value range of `key`, or nil if it is absent or expired.
    @inline(__always)
    func liveSlotValue(_ key: IndexKey) -> Range<Int>? {
        guard let slot = index[key] else { return nil }
        guard expiryEnabled else { return slot.valueRange }
        return liveValueRange(slot, now: configuration.clock.now())
    }

    // MARK: Writes

    /// Encodes `value` and appends it as the new record of `key`, expiring after `duration` seconds
    /// (nil: the store's default; 0: never) when key expiry is on.
    func set<V: PayloadCodable>(_ value: V, forKey key: String, expiresAfter duration: UInt32? = nil) throws(MappedKVError) {
        var buffer = scratch
        scratch = []
        defer {
            buffer.removeAll(keepingCapacity: true)
            scratch = buffer
        }
        buffer.removeAll(keepingCapacity: true)
        value.encodePayload(into: &buffer)
        try buffer.withRawBytes { (payload) throws(MappedKVError) in try setPayload(payload, forKey: key, expiresAfter: duration) }
    }

    /// Appends a record holding `payload` (plus the expiry suffix when expiry is on) for `key`.
    func setPayload(_ payload: UnsafeRawBufferPointer, forKey key: String, expiresAfter duration: UInt32? = nil) throws(MappedKVError) {
        try Self.validate(key: key)
        guard !payload.isEmpty else {
            throw .invalidArgument("an empty payload would be read as a deletion; encode empty values as 00")
        }
        let suffixLength = expiryEnabled ? ExpirySuffix.length : 0
        guard payload.count + suffixLength <= RecordLimits.maximumValueLength else { throw .valueTooLarge(payload.count) }
        let files = try writableFiles()
        if duration != nil && !expiryEnabled {
            throw .invalidArgument("an expiry duration needs key expiry enabled on the store")
        }
        let indexKey = IndexKey(key)
        let keyLength = key.utf8.count
        let valueLength = payload.count + suffixLength
        let recordLength = Record.encodedSize(keyLength: keyLength, valueLength: valueLength)
        if index.isEmpty || recordLength >= spaceLeft(files) || needsRandomIV {
            try writeBack(files, incomingLength: recordLength, needSync: !index.isEmpty)
        }
        let start = mirror.count
        Varint.append(UInt64(keyLength), to: &mirror)
        mirror.append(contentsOf: key.utf8)
        Varint.append(UInt64(valueLength), to: &mirror)
        let valueStart = mirror.count
        mirror.append(contentsOf: payload)
        if expiryEnabled {
            let expiry = ExpirySuffix.expiration(now: configuration.clock.now(), duration: duration ?? defaultExpiryDuration)
            ExpirySuffix.append(expiry, to: &mirror)
        }
        commitAppend(files, from: start)
        index[indexKey] = ValueSlot(
            recordStart: UInt32(start), valueStart: UInt32(valueStart), valueLength: UInt32(valueLength))
    }

    /// Removes `key`; an absent key is not an error.
    func remove(_ key: String) throws(MappedKVError) {
        try Self.validate(key: key)
        let files = try writableFiles()
        let indexKey = IndexKey(key)
        guard index.removeValue(forKey: indexKey) != nil else { return }
        let keyLength = key.utf8.count
        let recordLength = Record.encodedSize(keyLength: keyLength, valueLength: 0)
        if recordLength < spaceLeft(files) {
            let start = mirror.count
            Varint.append(UInt64(keyLength), to: &mirror)
            mirror.append(contentsOf: key.utf8)
            mirror.append(0)
            commitAppend(files, from: start)
        } else if index.isEmpty {
            try clearAll()
        } else {
            // The compaction drops the key, so no deletion record is needed.
            try writeBack(files, incomingLength: 0, needSync: true)
        }
    }

    /// Empties the store: the file returns to its expected capacity and the sequence increments.
    func clearAll() throws(MappedKVError) {
        let files = try writableFiles()
        guard !(files.dataFileSize == expectedCapacity && mirror.isEmpty && index.isEmpty && !needsRandomIV) else { return }
        let oldLength = mirror.count
        do {
            if files.dataFileSize != expectedCapacity { try files.resizeData(to: expectedCapacity) }
            let newCipher = freshCipher()
            var newMeta = meta
            let write = newMeta.update(actualSize: 0, crc: 0, iv: newCipher?.iv, increasesSequence: true)
            files.writeMeta(newMeta, write)
            try files.synchronizeMeta()
            meta = newMeta
            if let newCipher { cipher = newCipher.stream }
        } catch {
            throw poison(error)
        }
        // Unlike MMKV, do not leave the old records readable in the first page.
        files.zeroRegion(0..<oldLength)
        mirror = []
        index = [:]
        recordCount = 0
        logger.debug("cleared store", metadata: ["id": "\(location.id)", "sequence": "\(meta.sequence)"])
    }

    /// Compacts the store and shrinks its file while it is more than twice the size it needs.
    func trim() throws(MappedKVError) {
        let files = try writableFiles()
        if mirror.isEmpty || index.isEmpty { return try clearAll() }
        guard files.dataFileSize > expectedCapacity else { return }
        let currentSize = files.dataFileSize
        let minimum = expectedCapacity
        try rewrite(files, needSync: true) { length in
            FileSizePolicy.sizeAfterTrim(fileSize: currentSize, actualSize: length, minimum: minimum)
        }
    }

    /// Re-encrypts the store under `newKey` (nil: decrypts it to plain text) with a full write-back:
    /// a fresh IV and an incremented sequence. On failure before anything is written, the old key stays.
    func rekey(to newKey: CryptKey?) throws(MappedKVError) {
        let files = try writableFiles()
        let oldKey = cryptKey, oldCipher = cipher
        cryptKey = newKey
        if newKey == nil { cipher = nil }
        let currentSize = files.dataFileSize
        do {
            try rewrite(files, needSync: true) { _ in currentSize }
        } catch {
            if !isClosedAfterFailure {
                cryptKey = oldKey
                cipher = oldCipher
            }
            throw error
        }
        logger.debug("rekeyed store", metadata: ["id": "\(location.id)", "encrypted": "\(newKey != nil)"])
    }

    private var isClosedAfterFailure: Bool { files == nil }

    /// Turns key expiry on (every value gets a 4-byte expiry time; `defaultDuration` seconds applies
    /// to values set without one, 0 meaning never) or off (the suffixes are removed), as MMKV's
    /// `enableAutoKeyExpire` / `disableAutoKeyExpire`: an empty new store only changes its meta, any
    /// other store is rewritten. Both increment the sequence and set the meta version to exactly 4.
    func configureExpiry(enabled: Bool, defaultDuration: UInt32) throws(MappedKVError) {
        let files = try writableFiles()
        defer { if expiryEnabled { defaultExpiryDuration = defaultDuration } }
        guard enabled != expiryEnabled else { return }
        var flags = meta.flags
        if enabled { flags.insert(.keyExpiry) } else { flags.remove(.keyExpiry) }
        if files.dataFileSize == expectedCapacity && mirror.isEmpty {
            var newMeta = meta
            _ = newMeta.update(actualSize: 0, crc: 0, increasesSequence: true)
            newMeta.flags = flags
            newMeta.version = .flag
            do {
                files.writeMeta(newMeta, .wholeStruct)
                try files.synchronizeMeta()
            } catch { throw poison(error) }
            meta = newMeta
            expiryEnabled = enabled
        } else {
            let currentSize = files.dataFileSize
            let liveCount = index.count
            let page = pageSize
            let transform: ValueTransform = enabled
                ? .addExpiry(ExpirySuffix.expiration(now: configuration.clock.now(), duration: defaultDuration))
                : .removeExpiry
            try rewrite(files, needSync: true, transform: transform, flags: flags) { length in
                FileSizePolicy.sizeForWriteBack(
                    fileSize: currentSize, liveLength: length, incomingLength: 0,
                    liveCount: liveCount, needSync: true, pageSize: page)
            }
        }
        logger.debug("key expiry changed", metadata: ["id": "\(location.id)", "enabled": "\(enabled)"])
    }

    /// Flushes both files to disk.
    func sync() throws(MappedKVError) {
        let files = try openFiles()
        guard !configuration.isReadOnly else { return }
        try files.synchronizeData()
        try files.synchronizeMeta()
    }

    /// Closes the files; later calls fail with ``MappedKVError/closed(_:)``.
    func close() {
        files?.close()
        files = nil
        closedReason = "the store was closed"
        mirror = []
        index = [:]
    }

    // MARK: Internals

    static func validate(key: String) throws(MappedKVError) {
        let length = key.utf8.count
        guard length > 0 else { throw .invalidKey("key is empty") }
        guard length <= RecordLimits.maximumKeyLength else {
            throw .invalidKey("key is \(length) bytes; the limit is \(RecordLimits.maximumKeyLength)")
        }
    }

    private func spaceLeft(_ files: StoreFiles) -> Int { files.dataFileSize - 4 - mirror.count }

    /// An encrypted store whose meta predates random IVs (version < 2) is rewritten with one, as MMKV does.
    private var needsRandomIV: Bool { cipher != nil && meta.version < .randomIV }

    /// A fresh IV and a stream from it, for an encrypted store; nil for a plain one.
    private func freshCipher() -> (iv: InitializationVector, stream: CFBStream)? {
        guard let key = cryptKey else { return nil }
        let bytes = SecureRandom.bytes(16)
        guard let iv = InitializationVector(bytes) else { return nil }
        return (iv, CFBStream(key: key, iv: bytes))
    }

    /// Writes `mirror[start...]` to the file (encrypted by continuing the stream, for an encrypted
    /// store) and updates the CRC and size in the meta (two 4-byte stores).
    private func commitAppend(_ files: StoreFiles, from start: Int) {
        mirror.withUnsafeBytes { bytes in
            let stored = files.writeRegion(UnsafeRawBufferPointer(rebasing: bytes[start...]), at: start, encryptingWith: cipher)
            let crc = CRC32.update(meta.crcDigest, stored)
            let write = meta.update(actualSize: UInt32(bytes.count), crc: crc, increasesSequence: false)
            files.writeMeta(meta, write)
        }
        recordCount += 1
    }

    /// A full write-back sized by MMKV's growth rule for an incoming record of `incomingLength` bytes.
    private func writeBack(_ files: StoreFiles, incomingLength: Int, needSync: Bool) throws(MappedKVError) {
        let currentSize = files.dataFileSize
        let liveCount = index.count
        let page = pageSize
        try rewrite(files, needSync: needSync) { length in
            FileSizePolicy.sizeForWriteBack(
                fileSize: currentSize, liveLength: length, incomingLength: incomingLength,
                liveCount: liveCount, needSync: needSync, pageSize: page)
        }
    }

    /// How a rewrite changes each value (for turning key expiry on or off).
    enum ValueTransform {
        /// Append an expiry suffix with this time to every value.
        case addExpiry(UInt32)
        /// Remove the last 4 bytes of every value.
        case removeExpiry
    }

    /// Rewrites the data region as a fresh holder plus every live record (expired ones dropped,
    /// values transformed if asked), sizes the file with `chooseFileSize(newLength)`, and stores the
    /// whole meta with the sequence incremented and, if given, new flags (version exactly 4).
    private func rewrite(
        _ files: StoreFiles, needSync: Bool, transform: ValueTransform? = nil, flags: MetaFlags? = nil,
        chooseFileSize: (Int) -> Int?
    ) throws(MappedKVError) {
        var fresh: [UInt8] = []
        fresh.reserveCapacity(mirror.count + (transform == nil ? 0 : index.count * ExpirySuffix.length))
        fresh.append(contentsOf: ItemSizeHolder.random())
        var newSlots: [ValueSlot?] = []
        newSlots.reserveCapacity(index.count)
        let now = expiryEnabled ? configuration.clock.now() : 0
        mirror.withUnsafeBytes { old in
            for slot in index.values {
                if expiryEnabled, liveValueRange(slot, now: now) == nil {
                    newSlots.append(nil)  // expired: dropped, as MMKV's filterExpiredKeys does
                    continue
                }
                let start = fresh.count
                guard let transform else {
                    fresh.append(contentsOf: old[slot.recordRange])
                    newSlots.append(ValueSlot(
                        recordStart: UInt32(start),
                        valueStart: UInt32(start + Int(slot.valueStart - slot.recordStart)),
                        valueLength: slot.valueLength))
                    continue
                }
                var cursor = ByteCursor(old, position: slot.recordRange.lowerBound)
                let keyLength = (try? cursor.readLength()) ?? 0
                var value = Array(old[slot.valueRange])
                switch transform {
                case .addExpiry(let time): ExpirySuffix.append(time, to: &value)
                case .removeExpiry: if value.count > ExpirySuffix.length { value.removeLast(ExpirySuffix.length) }
                }
                Varint.append(UInt64(keyLength), to: &fresh)
                fresh.append(contentsOf: old[cursor.position..<(cursor.position + keyLength)])
                Varint.append(UInt64(value.count), to: &fresh)
                let valueStart = fresh.count
                fresh.append(contentsOf: value)
                newSlots.append(ValueSlot(
                    recordStart: UInt32(start), valueStart: UInt32(valueStart), valueLength: UInt32(value.count)))
            }
        }
        guard let newFileSize = chooseFileSize(fresh.count) else {
            throw .storeFull("the data region would exceed \(RecordLimits.maximumRegionLength) bytes")
        }
        // Growth happens before anything is written, so a failure here leaves the files as they were.
        if newFileSize > files.dataFileSize { try files.resizeData(to: newFileSize) }
        // An encrypted region is one stream from a fresh IV at position 0.
        let newCipher = freshCipher()
        let crc: UInt32 = fresh.withUnsafeBytes { bytes in
            CRC32.update(0, files.writeRegion(bytes, at: 0, encryptingWith: newCipher?.stream))
        }
        var newMeta = meta
        var write = newMeta.update(
            actualSize: UInt32(fresh.count), crc: crc, iv: newCipher?.iv, increasesSequence: true)
        if let flags {
            newMeta.flags = flags
            newMeta.version = .flag
            write = .wholeStruct
        }
        do {
            if newFileSize < files.dataFileSize { try files.resizeData(to: newFileSize) }
            if needSync { try files.synchronizeData() }
            files.writeMeta(newMeta, write)
            if needSync { try files.synchronizeMeta() }
        } catch {
            throw poison(error)
        }
        // Old records past the new end would stay readable (in plain text, after encrypting a
        // plain store); MMKV leaves them, we erase them.
        if fresh.count < mirror.count { files.zeroRegion(fresh.count..<mirror.count) }
        meta = newMeta
        mirror = fresh
        if let newCipher { cipher = newCipher.stream }
        var position = 0
        var expiredKeys: [IndexKey] = []
        for slotIndex in index.indices {
            if let slot = newSlots[position] { index.values[slotIndex] = slot } else { expiredKeys.append(index.keys[slotIndex]) }
            position += 1
        }
        for key in expiredKeys { index.removeValue(forKey: key) }
        if let flags { expiryEnabled = flags.contains(.keyExpiry) }
        recordCount = index.count
        logger.debug("full write-back", metadata: [
            "id": "\(location.id)", "keys": "\(index.count)", "actualSize": "\(fresh.count)",
            "fileSize": "\(files.dataFileSize)", "sequence": "\(meta.sequence)",
        ])
    }
}
