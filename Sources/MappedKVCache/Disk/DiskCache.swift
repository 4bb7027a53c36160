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
/// A crash may lose entries set since the last ``sync()`` or ``close()`` (the durability points),
/// but never breaks those.
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
    /// ``DiskCacheConfiguration/accessTimeFlushInterval`` in milliseconds, converted once rather
    /// than on every get.
    let accessTimeFlushMilliseconds: UInt64
    /// The configuration's clock, kept apart so that a read or a set asks it without going through
    /// the whole configuration.
    let clock: CacheClock
    /// The configuration's ``DiskCacheConfiguration/inlineThreshold``, kept apart likewise.
    let inlineThreshold: Int
    /// The configuration's ``DiskCacheConfiguration/defaultTimeToLive``, kept apart likewise.
    let defaultTimeToLive: Duration?
    let backgroundTrim = Mutex<Task<Void, Never>?>(nil)
    /// Held by a background trim turn; true once the cache is closed (see ``close()``).
    let backgroundTurn = Mutex<Bool>(false)
    /// The entry and byte counts of the directory (`totals`), kept under the manifest's lock.
    let totals: CacheTotals
    /// Raised while a background trim to the count and byte limits is scheduled in this process.
    let limitTrimScheduled = Atomic<Bool>(false)
    /// The directory's name in the process-wide ``CacheChangeHub``.
    let hubDirectory: String
    /// The listeners' count of ``hubDirectory``, checked before a write posts.
    let hubChannel: CacheChangeChannel
    /// Called at the points of a set where a crash test kills the process; nil outside them.
    let faultHook = Mutex<(@Sendable (CacheFaultPoint) -> Void)?>(nil)
    /// Whether ``faultHook`` holds a hook: a set reads the mutex only when it does.
    let hasFaultHook = Atomic<Bool>(false)
    /// The metrics ``DiskCacheConfiguration/metrics`` asks for, made at open; nil reports nothing.
    let metrics: CacheMetrics?
    /// The value files this instance installed since its last ``sync()``, which flushes them.
    let unsyncedFiles = Mutex(UnsyncedFiles())

    /// The names ``sync()`` flushes. Past ``limit`` names it stops listing them (a cache that is
    /// never synced would otherwise hold every name it ever wrote) and the next sync flushes
    /// every file in `files/` instead.
    struct UnsyncedFiles: Sendable {
        static let limit = 4096
        var names: [String] = []
        var overflowed = false

        mutating func append(_ name: String) {
            guard !overflowed else { return }
            if names.count < Self.limit {
                names.append(name)
            } else {
                overflowed = true
                names = []
            }
        }
    }

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
        self.clock = configuration.clock
        self.inlineThreshold = configuration.inlineThreshold
        self.defaultTimeToLive = configuration.defaultTimeToLive
        var logger = logger ?? Logger(label: "MappedKVCache", factory: { _ in SwiftLogNoOpLogHandler() })
        logger[metadataKey: "cache"] = "\(directory)"
        self.logger = logger
        self.files = CacheFiles(directory: directory, cryptKey: configuration.cryptKey)
        try files.createDirectories()
        self.hubDirectory = CacheChangeHub.canonical(directory)
        self.hubChannel = CacheChangeHub.channel(for: hubDirectory)
        self.totals = CacheTotals(directory: directory)
        self.manifest = try Self.openManifest(in: directory, configuration: configuration, logger: logger)
        self.accessTimes = Mutex(AccessTimeLog(lastFlush: configuration.clock.now()))
        self.accessTimeFlushMilliseconds = configuration.accessTimeFlushInterval.cacheMilliseconds
        self.metrics = configuration.metrics.map(CacheMetrics.init)
        if let interval = configuration.trimInterval { startBackgroundTrim(every: interval) }
    }

    deinit {
        backgroundTrim.withLock { $0?.cancel() }
    }

    /// Makes every entry set so far durable: a power loss after this returns loses none of them
    /// (the cache's durability point, as `MappedKV.sync()` is the store's). The value files this
    /// instance installed are flushed first, then the folder that names them, then the manifest
    /// that records them, so the manifest never vouches for a file that is not on disk. Between
    /// durability points a crash may lose entries, never serve wrong bytes.
    ///
    /// - Throws: ``CacheError/system(_:)`` if a flush fails (the manifest's failure closes it).
    public func sync() throws(CacheError) {
        let pending = unsyncedFiles.withLock { pending in
            defer { pending = UnsyncedFiles() }
            return pending
        }
        let names = pending.overflowed ? files.listFiles() : pending.names
        do throws(CacheError) {
            for name in names { try files.synchronize(name) }
            if !names.isEmpty { try files.synchronizeFilesFolder() }
            try flushAccessTimes()
            do { try manifest.sync() } catch { throw CacheError.store(error) }
        } catch {
            unsyncedFiles.withLock { unsynced in
                if pending.overflowed { unsynced.overflowed = true }
                for name in pending.names { unsynced.append(name) }
            }
            throw error
        }
    }

    /// Finishes a trim to the count and byte limits that this process's writes made due (unless
    /// another process is trimming), flushes pending access times, makes every entry durable (as
    /// ``sync()``; a failure is logged) and closes the manifest; later calls throw.
    public func close() {
        if limitTrimScheduled.load(ordering: .acquiring) { _ = limitTrimTurn() }
        // Waits for a turn in progress.
        let wasClosed = backgroundTurn.withLock { isClosed in
            defer { isClosed = true }
            return isClosed
        }
        backgroundTrim.withLock { task in
            task?.cancel()
            task = nil
        }
        if !wasClosed {
            do { try sync() } catch {
                logger.error(
                    "the flush at close failed: entries set since the last sync may be lost",
                    metadata: ["error": "\(error)"])
            }
        }
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

    /// `prefix`, a colon and `key`'s bytes, built in one copy (`+` on strings copies more: the
    /// cache bench's disk_set).
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

    /// Calls `body` with the UTF-8 bytes of the manifest key `e:<key>`, built in a temporary
    /// buffer: a get makes no `String` of it (the cache bench's disk_get).
    @inline(__always)
    static func withEntryKeyBytes<R>(_ key: String, _ body: (UnsafeRawBufferPointer) -> R) -> R {
        var key = key
        return key.withUTF8 { utf8 in
            withUnsafeTemporaryAllocation(byteCount: utf8.count + 2, alignment: 1) { buffer in
                buffer[0] = UInt8(ascii: "e")
                buffer[1] = UInt8(ascii: ":")
                UnsafeMutableRawBufferPointer(rebasing: buffer[2...]).copyMemory(from: UnsafeRawBufferPointer(utf8))
                return body(UnsafeRawBufferPointer(buffer))
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
            guard let raw = try? cursor.readWholeLengthDelimited(expected: "a cache record") else { return }
            summary = CacheEntryRecord.summary(of: raw)
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
        CacheChangeHub.post(.keys([key]), in: hubChannel)
    }

    /// Removes every entry and returns at once: the value files are moved aside and deleted in
    /// the background (a deletion cut short is finished by the next ``trim()``).
    public func removeAll() throws(CacheError) {
        let files = self.files
        let trash = try exclusively { transaction -> String in
            let trash = try files.moveFilesToTrash()
            try transaction.clearAll()
            try totals.write(CacheCounts(count: 0, bytes: 0))
            metrics?.record(CacheCounts(count: 0, bytes: 0))
            return trash
        }
        accessTimes.withLock { $0.forgetAll() }
        CacheChangeHub.post(.all, in: hubChannel)
        Task.detached(priority: .background) { CacheFiles.deleteTree(trash) }
    }
}
