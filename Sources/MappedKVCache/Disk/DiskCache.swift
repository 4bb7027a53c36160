import Logging
import MappedKV
import MappedKVFormat
import MappedKVIO
import Synchronization

/// A disk cache in one directory, shared safely by every process that opens it.
///
/// Its manifest is a MappedKV store (`manifest`, in multi-process mode) with one record per entry
/// under `e:<key>`: size, CRC-32, modification time, optional expiry and extended data, and the
/// value itself up to ``DiskCacheConfiguration/inlineThreshold`` bytes or the name of the file in
/// `files/` that holds it (see `CacheEntryRecord`, `CacheFiles`). Last-access times are
/// coalesced in memory and written as one batch record (`t:<name>`) at most once per
/// ``DiskCacheConfiguration/accessTimeFlushInterval``, so reads are not writes (`AccessTimeBatch`).
///
/// The invariants: a value file is renamed into place and recorded under the manifest's exclusive
/// lock, so every file is either recorded or an orphan that ``trim()`` collects; and a read
/// returns bytes only when their length and CRC are the recorded ones, so a missing, short or
/// changed file, or a damaged record, is a miss (and the entry is dropped), never wrong bytes.
/// A crash may lose entries (nothing is flushed to disk by default) but never breaks those.
///
/// ```swift
/// let cache = try DiskCache(directory: "/tmp/thumbnails")
/// try cache.set(Array("hello".utf8), forKey: "greeting")
/// let bytes = try cache.value(forKey: "greeting")
/// ```
public final class DiskCache: Sendable {
    /// The cache's directory.
    public let directory: String
    /// How it was opened.
    public let configuration: DiskCacheConfiguration
    let manifest: MappedKV
    let files: CacheFiles
    let logger: Logger
    let accessTimes: Mutex<AccessTimeLog>
    /// ``DiskCacheConfiguration/accessTimeFlushInterval`` in milliseconds, converted once (the
    /// conversion cost a get about 240 instructions).
    let accessTimeFlushMilliseconds: UInt64
    let backgroundTrim = Mutex<Task<Void, Never>?>(nil)
    /// Held by a background trim turn; true once the cache is closed (see ``close()``).
    let backgroundTurn = Mutex<Bool>(false)
    /// The entry and byte counts of the directory (`totals`), kept under the manifest's lock.
    let totals: CacheTotals
    /// Raised while a background trim to the count and byte limits is scheduled in this process.
    let limitTrimScheduled = Atomic<Bool>(false)
    /// The directory's name in the process-wide ``CacheChangeHub``.
    let hubDirectory: String
    /// Called at the points of a set where a crash test kills the process; nil outside them.
    let faultHook = Mutex<(@Sendable (CacheFaultPoint) -> Void)?>(nil)

    /// The manifest store's ID inside the directory.
    static let manifestID = "manifest"

    /// Opens the cache in `directory`, creating it if needed.
    ///
    /// - Throws: ``CacheError/store(_:)`` when the manifest cannot be opened: for example an
    ///   encrypted cache opened with the wrong key, or none (nothing is changed on disk), or a
    ///   damaged manifest, unless ``DiskCacheConfiguration/onDamagedManifest`` moves it aside.
    public init(
        directory: String, configuration: DiskCacheConfiguration = DiskCacheConfiguration(), logger: Logger? = nil
    ) throws(CacheError) {
        guard !directory.isEmpty else { throw .invalidArgument(reason: "the cache directory is empty") }
        guard configuration.inlineThreshold >= 0 else {
            throw .invalidArgument(reason: "the inline threshold is negative")
        }
        self.directory = directory
        self.configuration = configuration
        var logger = logger ?? Logger(label: "MappedKVCache", factory: { _ in SwiftLogNoOpLogHandler() })
        logger[metadataKey: "cache"] = "\(directory)"
        self.logger = logger
        self.files = CacheFiles(directory: directory, cryptKey: configuration.cryptKey)
        try files.createDirectories()
        self.hubDirectory = CacheChangeHub.canonical(directory)
        self.totals = CacheTotals(directory: directory)
        self.manifest = try Self.openManifest(in: directory, configuration: configuration, logger: logger)
        self.accessTimes = Mutex(AccessTimeLog(lastFlush: configuration.clock.now()))
        self.accessTimeFlushMilliseconds = configuration.accessTimeFlushInterval.cacheMilliseconds
        if let interval = configuration.trimInterval { startBackgroundTrim(every: interval) }
    }

    deinit {
        backgroundTrim.withLock { $0?.cancel() }
    }

    /// Finishes a trim to the count and byte limits that this process's writes made due (unless
    /// another process is trimming), flushes pending access times and closes the manifest; later
    /// calls throw.
    public func close() {
        if limitTrimScheduled.load(ordering: .acquiring) { _ = limitTrimTurn() }
        backgroundTurn.withLock { isClosed in isClosed = true }  // waits for a turn in progress
        backgroundTrim.withLock { task in
            task?.cancel()
            task = nil
        }
        try? flushAccessTimes()
        manifest.close()
        totals.close()
    }

    // MARK: Keys

    static func entryKey(_ key: String) -> String { prefixed(UInt8(ascii: "e"), key) }
    static func accessKey(_ key: String) -> String { prefixed(UInt8(ascii: "a"), key) }

    /// The cache key of a manifest key `e:<key>`; nil for any other manifest key.
    static func cacheKey(ofEntryKey storeKey: String) -> String? {
        var utf8 = storeKey.utf8[...]
        guard utf8.popFirst() == UInt8(ascii: "e"), utf8.popFirst() == UInt8(ascii: ":"), !utf8.isEmpty else {
            return nil
        }
        return String(storeKey[utf8.startIndex...])
    }

    /// `prefix`, a colon and `key`'s bytes, built in one copy (`+` on strings cost a set about
    /// 330 instructions a key).
    private static func prefixed(_ prefix: UInt8, _ key: String) -> String {
        var key = key
        return key.withUTF8 { bytes in
            String(unsafeUninitializedCapacity: bytes.count + 2) { buffer in
                buffer[0] = prefix
                buffer[1] = UInt8(ascii: ":")
                _ = UnsafeMutableBufferPointer(rebasing: buffer[2...]).initialize(from: bytes)
                return bytes.count + 2
            }
        }
    }

    /// Checks that `key` fits in the manifest.
    static func validate(_ key: String) throws(CacheError) {
        let length = key.utf8.count
        guard length > 0 else { throw .invalidKey(reason: "the key is empty") }
        guard length + 2 <= RecordLimits.maximumKeyLength else {
            throw .invalidKey(reason: "the key is \(length) bytes; the limit is \(RecordLimits.maximumKeyLength - 2)")
        }
    }

    /// Runs `body` under the manifest's exclusive inter-process lock.
    func exclusively<R: Sendable>(_ body: (MappedKV.Transaction) throws -> R) throws(CacheError) -> R {
        do {
            return try manifest.withExclusiveLock(body)
        } catch let error as CacheError {
            throw error
        } catch let error as MappedKVError {
            throw .store(error)
        } catch {
            throw .invalidArgument(reason: "\(error)")
        }
    }

    /// The value size and file (nil for an inline value) of the record under `entryKey` now,
    /// read where the record lies; nil for an absent or damaged record (which the totals do not
    /// count either).
    static func summary(
        ofEntry entryKey: String, in transaction: MappedKV.Transaction
    ) throws(MappedKVError) -> (size: Int, fileName: String?)? {
        var summary: (size: Int, fileName: String?)?
        try transaction.withPayload(forKey: entryKey) { payload in
            guard let payload else { return }
            var cursor = ByteCursor(payload)
            guard let raw = try? cursor.readWholeLengthDelimited(expected: "a cache record"),
                let record = CacheEntryRecord.decode(raw)
            else { return }
            summary = (record.size, record.fileName)
        }
        return summary
    }

    /// The record of `key` as it is in the manifest now, with its raw bytes.
    static func record(
        of key: String, in transaction: MappedKV.Transaction
    ) throws(MappedKVError) -> (raw: [UInt8], record: CacheEntryRecord?)? {
        guard let raw = try transaction.bytes(forKey: entryKey(key)) else { return nil }
        return (raw, CacheEntryRecord(decoding: raw))
    }

    // MARK: Values

    /// Stores `value` under `key`, replacing any previous value.
    ///
    /// - Parameters:
    ///   - value: the bytes to store.
    ///   - key: the entry's key.
    ///   - timeToLive: after this long the entry is a miss and trim removes it; nil never expires.
    ///   - extendedData: bytes kept with the entry and returned by ``entry(forKey:)``.
    ///
    /// A nil `timeToLive` takes ``DiskCacheConfiguration/defaultTimeToLive``.
    public func set(
        _ value: [UInt8], forKey key: String, timeToLive: Duration? = nil, extendedData: [UInt8]? = nil
    ) throws(CacheError) {
        try set(value, forKey: key, timeToLive: timeToLive, extendedData: extendedData, whileRecorded: nil)
    }

    /// ``set(_:forKey:timeToLive:extendedData:)``, calling `whileRecorded` once the record is in
    /// the manifest, before its exclusive lock is released (so calls from concurrent sets of the
    /// key run in the order of their records), and telling the change to every cache of this
    /// process on the directory but the listener `excluded`.
    func set(
        _ value: [UInt8], forKey key: String, timeToLive: Duration?, extendedData: [UInt8]?,
        whileRecorded: (() -> Void)?, excluding excluded: UInt64? = nil
    ) throws(CacheError) {
        try Self.validate(key)
        let timeToLive = timeToLive ?? configuration.defaultTimeToLive
        guard value.count <= RecordLimits.maximumValueLength / 2 else {
            throw .invalidArgument(reason: "a value of \(value.count) bytes is too large for the cache")
        }
        let now = configuration.clock.now()
        let expiry = timeToLive.map { ttl in
            let (expiry, overflow) = now.addingReportingOverflow(ttl.cacheMilliseconds)
            return overflow ? UInt64.max : expiry  // a time to live too long to express: never
        }
        let crc = value.withUnsafeBytes { CRC32.update(0, $0) }
        let inline = value.count <= configuration.inlineThreshold
        let name = inline ? nil : FileNames.random()
        let hook = faultHook.withLock { $0 }
        let halfway = hook.map { hook in { hook(.writingTemporaryFile) } }
        let temporary = inline ? nil : try files.writeTemporary(value, halfway: halfway)
        let record = CacheEntryRecord(
            size: value.count, crc: crc, modified: now, expiry: expiry, extendedData: extendedData,
            location: name.map { .file(name: $0) } ?? .inline(value))
        let encoded = record.encoded
        let files = self.files
        let entryKey = Self.entryKey(key)
        let replaced: String?
        let overLimits: Bool
        do {
            (replaced, overLimits) = try exclusively { transaction -> (String?, Bool) in
                let counts = try countsBeforeWrite(in: transaction)
                let old = try Self.summary(ofEntry: entryKey, in: transaction)
                if let temporary, let name {
                    try files.install(temporary, as: name)
                    hook?(.renamedBeforeRecording)
                }
                try transaction.set(encoded, forKey: entryKey)
                whileRecorded?()
                hook?(.recordedBeforeUnlocking)
                let delta = CacheCounts(count: old == nil ? 1 : 0, bytes: value.count - (old?.size ?? 0))
                return (old?.fileName, try account(delta, after: counts))
            }
        } catch {
            if let temporary { try? FileDescriptor.remove(temporary) }
            throw error
        }
        if let replaced, replaced != name { files.remove(replaced) }
        if overLimits { trimSoon() }
        CacheChangeHub.post(.keys([key]), in: hubDirectory, excluding: excluded)
    }

    /// The value of `key`, or nil on a miss. A hit counts as an access for the LRU order.
    public func value(forKey key: String) throws(CacheError) -> [UInt8]? {
        try lookUp(key, withExtendedData: false)?.value
    }

    /// The entry of `key` with its metadata, or nil on a miss.
    public func entry(forKey key: String) throws(CacheError) -> DiskCacheEntry? {
        guard let found = try lookUp(key, withExtendedData: true) else { return nil }
        return DiskCacheEntry(
            key: key, value: found.value, modified: found.modified, expiry: found.expiry,
            extendedData: found.extendedData)
    }

    /// The value of `key` and its metadata (the extended data only if asked for), or nil on a
    /// miss; an entry that cannot be served is dropped. A hit counts as an access.
    func lookUp(_ key: String, withExtendedData: Bool) throws(CacheError) -> ManifestLookup.Found? {
        try Self.validate(key)
        let now = configuration.clock.now()
        // The record is judged where it lies in the manifest's memory: an inline value is checked
        // in place and copied once, into the array returned.
        let lookup = try manifestCall { () throws(MappedKVError) in
            try manifest.withBytes(forKey: Self.entryKey(key)) { raw in
                ManifestLookup(raw, at: now, withExtendedData: withExtendedData)
            }
        }
        let found: ManifestLookup.Found
        switch lookup {
        case nil:
            return nil
        case .inline(let inline):
            found = inline
        case .file(let raw):
            guard let record = CacheEntryRecord(decoding: raw), let name = record.fileName,
                let bytes = try files.read(name, expecting: record)
            else {
                try drop(key, ifStill: raw)
                return nil
            }
            found = ManifestLookup.Found(
                value: bytes, modified: record.modified, expiry: record.expiry, extendedData: record.extendedData)
        case .unusable(let raw):
            try drop(key, ifStill: raw)
            return nil
        }
        noteAccess(key, at: now)
        return found
    }

    /// Whether `key` has an entry that has not expired (its bytes are not read).
    public func contains(_ key: String) throws(CacheError) -> Bool {
        try Self.validate(key)
        let raw = try manifestCall { () throws(MappedKVError) in
            try manifest.bytes(forKey: Self.entryKey(key))
        }
        guard let raw, let record = CacheEntryRecord(decoding: raw) else { return false }
        return !record.isExpired(at: configuration.clock.now())
    }

    /// The value a record describes, if its bytes are exactly the recorded ones.
    func read(_ record: CacheEntryRecord) throws(CacheError) -> [UInt8]? {
        switch record.location {
        case .inline: return record.intactInlineValue
        case .file(let name): return try files.read(name, expecting: record)
        }
    }

    /// Removes the entry of `key` if its record is still `raw` (another process may have replaced
    /// it since it was read), and its file.
    func drop(_ key: String, ifStill raw: [UInt8]) throws(CacheError) {
        let name = try exclusively { transaction -> String?? in
            guard let current = try Self.record(of: key, in: transaction), current.raw == raw else { return nil }
            let counts = try countsBeforeWrite(in: transaction)
            try manifest.removeValues(forKeys: [Self.entryKey(key), Self.accessKey(key)])  // one append
            let delta =
                current.record.map { CacheCounts(count: -1, bytes: -$0.size) } ?? CacheCounts(count: 0, bytes: 0)
            _ = try account(delta, after: counts)
            return .some(current.record?.fileName)
        }
        if case .some(.some(let name)) = name { files.remove(name) }
        if name != nil { CacheChangeHub.post(.keys([key]), in: hubDirectory) }
        logger.debug("dropped an entry that cannot be served", metadata: ["key": "\(key)"])
    }

    /// Removes the entry of `key`; an absent key is not an error.
    public func removeValue(forKey key: String) throws(CacheError) {
        try Self.validate(key)
        let name = try exclusively { transaction -> String? in
            let old = try Self.record(of: key, in: transaction)
            guard let old else { return nil }
            let counts = try countsBeforeWrite(in: transaction)
            try manifest.removeValues(forKeys: [Self.entryKey(key), Self.accessKey(key)])  // one append
            let delta = old.record.map { CacheCounts(count: -1, bytes: -$0.size) } ?? CacheCounts(count: 0, bytes: 0)
            _ = try account(delta, after: counts)
            return old.record?.fileName
        }
        if let name { files.remove(name) }
        CacheChangeHub.post(.keys([key]), in: hubDirectory)
    }

    /// Removes every entry and returns at once: the value files are moved aside and deleted in
    /// the background (a deletion cut short is finished by the next ``trim()``).
    public func removeAll() throws(CacheError) {
        let files = self.files
        let trash = try exclusively { transaction -> String in
            let trash = try files.moveFilesToTrash()
            try transaction.clearAll()
            try totals.write(CacheCounts(count: 0, bytes: 0))
            return trash
        }
        accessTimes.withLock { $0.forgetAll() }
        CacheChangeHub.post(.all, in: hubDirectory)
        Task.detached(priority: .background) { CacheFiles.deleteTree(trash) }
    }
}

/// An entry read from a ``DiskCache``.
public struct DiskCacheEntry: Sendable, Equatable {
    /// The entry's key.
    public var key: String
    /// The value's bytes.
    public var value: [UInt8]
    /// When it was set, in milliseconds since 1970.
    public var modified: UInt64
    /// When it expires, in milliseconds since 1970, or nil.
    public var expiry: UInt64?
    /// The extended data set with it, if any.
    public var extendedData: [UInt8]?
}

/// Where a crash test may kill a process that is setting a value (see ``DiskCache/setFaultHook(_:)``).
package enum CacheFaultPoint: String, Sendable, CaseIterable {
    /// Half of a value file's temporary file is written.
    case writingTemporaryFile = "writing-temporary-file"
    /// The value file has its final name; the manifest does not record it yet.
    case renamedBeforeRecording = "renamed-before-recording"
    /// The record is in the manifest; the exclusive lock is still held.
    case recordedBeforeUnlocking = "recorded-before-unlocking"
}

extension DiskCache {
    /// Installs a function called at each ``CacheFaultPoint`` of a set, for crash tests (the CLI's
    /// hidden `--crash-at`). Costs one lock and a nil check per set when none is installed.
    package func setFaultHook(_ hook: (@Sendable (CacheFaultPoint) -> Void)?) {
        faultHook.withLock { $0 = hook }
    }
}
