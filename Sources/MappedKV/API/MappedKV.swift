import Logging
import MappedKVFormat
import Synchronization

/// A memory-mapped key-value store, file-compatible with MMKV 2.x.
///
/// Each store is a pair of files, `<directory>/<id>` (an append log of records) and
/// `<directory>/<id>.crc` (the meta: CRC, size, sequence). Setting a key appends a record; the
/// last record of a key wins; when the file is full the live records are compacted and the file
/// doubles. Reads are served from process memory.
///
/// One instance may be used from many threads; every call is serialized by an internal lock.
///
/// ```swift
/// let directory = FileManager.default.temporaryDirectory.appendingPathComponent("myapp").path
/// let store = try MappedKV(id: "settings", directory: directory)
/// try store.set(Int32(3), forKey: "retries")
/// try store.set("eu-west", forKey: "region")
/// let retries = try store.int32(forKey: "retries") ?? 1
/// ```
public final class MappedKV: KeyValueAccess, Sendable {
    /// Where the store's files are.
    public let location: StoreLocation
    /// How the store was opened.
    public let configuration: Configuration
    /// The process's one instance of these files, shared with every other handle on them.
    let shared: SharedStore
    /// This handle's metrics, when ``Configuration/metrics`` asks for them; nil reports nothing.
    let metrics: StoreMetrics?
    /// Set once, when this handle closes.
    @usableFromInline let isClosed = Atomic<Bool>(false)
    /// `shared`'s published stamp and change flags, held here too so that the inlined check of
    /// ``synchronizeChangesIfMoved()`` reaches them one load sooner.
    @usableFromInline let observedStamp: ObservedStamp
    @usableFromInline let changeSignal: ChangeSignal

    /// A logger that discards everything: the default when none is injected.
    public static let silentLogger = Logger(label: "MappedKV", factory: { _ in SwiftLogNoOpLogHandler() })

    /// Opens the store `id` in `directory`, creating it if needed (unless read-only).
    ///
    /// The open loads and checks the whole store first; if that fails it throws and leaves both
    /// files exactly as they were. So does an open of a store of another kind than
    /// `configuration.storeKind` (``StoreKind``), which throws
    /// ``MappedKVError/wrongStoreKind(id:expected:found:)``.
    ///
    /// - Parameters:
    ///   - id: the store's ID; IDs with `\ / : * ? " < > |` are hashed into a file name as MMKV does.
    ///   - directory: the root directory; missing directories are created (mode 0700).
    ///   - configuration: read-only mode, expected capacity, the store's kind and more.
    ///   - logger: where the store logs (debug for normal events, error for damage); silent by default.
    public init(
        id: String, directory: String, configuration: Configuration = Configuration(), logger: Logger? = nil
    ) throws(MappedKVError) {
        let location = try StoreLocation(id: id, directory: directory)
        try configuration.storeKind?.validate()
        var logger = logger ?? MappedKV.silentLogger
        logger[metadataKey: "store"] = "\(id)"
        self.location = location
        self.configuration = configuration
        self.shared = try StoreRegistry.open(
            location, configuration: StoreMetrics.countingDamage(configuration), logger: logger)
        self.observedStamp = shared.observedStamp
        self.changeSignal = shared.signal
        self.metrics = configuration.metrics.map(StoreMetrics.init)
        if let metrics { shared.core.withLock { core in core.metrics = core.metrics ?? metrics } }
        do {
            try openAsConfiguredKind()
        } catch {
            close()
            throw error
        }
    }

    deinit {
        if !isClosed.exchange(true, ordering: .acquiringAndReleasing) { StoreRegistry.release(shared) }
    }

    /// Runs `body` on the store under its lock, then reports any change by another process it noticed.
    /// While another thread holds the store's exclusive section the call waits for it to end; on
    /// the thread that holds it the call is served (Sharing/ExclusiveSection.swift).
    @inline(__always)
    func withCore<R: Sendable>(_ body: (StoreCore) throws(MappedKVError) -> R) throws(MappedKVError) -> R {
        try ensureOpen()
        defer { reportChanges() }
        while true {
            if let result = try shared.withCoreUnlessSectionHeldElsewhere(body) { return result }
            shared.waitForSectionToEnd()
        }
    }

    /// Throws if this handle was closed.
    @inline(__always)
    func ensureOpen() throws(MappedKVError) {
        guard !isClosed.load(ordering: .relaxed) else {
            throw .closed("store '\(location.id)' was closed: open it again to use it")
        }
    }

    /// Hands changes by other processes, if any were noticed, to the observers.
    @inline(__always)
    func reportChanges() {
        if shared.signal.pending.load(ordering: .relaxed) { shared.deliverChanges() }
    }

    // MARK: Values

    /// Stores `value` under `key`, replacing any previous value.
    ///
    /// - Throws: ``MappedKVError/invalidKey(_:)`` for an empty key or one over 16 KiB,
    ///   ``MappedKVError/valueTooLarge(size:)`` for 2 GiB or more, or an I/O error.
    public func set<V: PayloadCodable & Sendable>(_ value: V, forKey key: String) throws(MappedKVError) {
        metrics?.countSet()
        try withCore { (core) throws(MappedKVError) in try core.set(value, forKey: key) }
    }

    /// The value of `key` decoded as `type`, or nil if the key is absent.
    ///
    /// The file stores no types: reading a key as a different type than it was written throws
    /// ``MappedKVError/valueDecodingFailed(key:type:reason:)`` when its bytes cannot be a `V`, and
    /// otherwise decodes them, as MMKV does (docs/FORMAT.md 2.5 lists what cannot be detected).
    public func value<V: PayloadCodable & Sendable>(
        forKey key: String, as type: V.Type = V.self
    ) throws(MappedKVError) -> V? {
        metrics?.countGet()
        return try withCore { (core) throws(MappedKVError) -> V? in try core.value(forKey: key, as: V.self) }
    }

    /// The stored payload bytes of `key` (the type-specific encoding of docs/FORMAT.md 2.5), or nil.
    public func payload(forKey key: String) throws(MappedKVError) -> [UInt8]? {
        metrics?.countGet()
        return try withCore { (core) throws(MappedKVError) -> [UInt8]? in try core.payload(forKey: key) }
    }

    /// Removes `key`; removing an absent key does nothing.
    public func removeValue(forKey key: String) throws(MappedKVError) {
        metrics?.countRemove()
        try withCore { (core) throws(MappedKVError) in try core.removeValue(forKey: key) }
    }

    /// Whether `key` has a value.
    public func contains(_ key: String) throws(MappedKVError) -> Bool {
        try withCore { (core) throws(MappedKVError) -> Bool in try core.contains(key) }
    }

    /// The number of keys.
    public var count: Int {
        get throws(MappedKVError) { try withCore { (core) throws(MappedKVError) -> Int in try core.count() } }
    }

    /// Every key, sorted by UTF-8 bytes.
    public var allKeys: [String] {
        get throws(MappedKVError) {
            try withCore { (core) throws(MappedKVError) -> [String] in try core.allKeys() }
                .sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
        }
    }

    /// Every key with its stored payload bytes, sorted by key bytes.
    public func entries() throws(MappedKVError) -> [(key: String, payload: [UInt8])] {
        try withCore { (core) throws(MappedKVError) -> [(key: String, payload: [UInt8])] in try core.entries() }
    }

    // MARK: Files

    /// The data file's size in bytes (MMKV's `totalSize`).
    public var totalSize: Int {
        get throws(MappedKVError) {
            try withCore { (core) throws(MappedKVError) -> Int in
                try core.prepareRead()
                return core.dataFileSize
            }
        }
    }

    /// The used bytes of the data region, excluding the 4-byte header (MMKV's `actualSize`).
    public var actualSize: Int {
        get throws(MappedKVError) {
            try withCore { (core) throws(MappedKVError) -> Int in
                try core.prepareRead()
                return core.actualSize
            }
        }
    }

    /// What the last load of this store's files that found damage did about it (at open, or
    /// reloading after another process's change), or nil if no load found damage.
    public var recoveryReport: RecoveryReport? {
        (try? withCore { (core) throws(MappedKVError) -> RecoveryReport? in core.findings.recovery }) ?? nil
    }

    /// What the last load of this store's files that found writes lost to a crash kept and lost
    /// (at open, or reloading after another process's change), or nil if no load found any. A
    /// crash that costs only writes made after the last durability point is not damage: no
    /// handler is asked and nothing is copied aside (<doc:DurabilityContract>).
    public var crashLossReport: CrashLossReport? {
        (try? withCore { (core) throws(MappedKVError) -> CrashLossReport? in core.findings.crashLoss }) ?? nil
    }

    /// A snapshot of the store's file-level state.
    public func info() throws(MappedKVError) -> StoreInfo {
        try withCore { (core) throws(MappedKVError) -> StoreInfo in try core.info() }
    }

    /// Removes every key; the file shrinks to its expected capacity and the sequence increments.
    public func clearAll() throws(MappedKVError) {
        try withCore { (core) throws(MappedKVError) in try core.clearAll() }
    }

    /// Compacts the store and shrinks the file while it is more than twice the size it needs.
    public func trim() throws(MappedKVError) {
        try withCore { (core) throws(MappedKVError) in try core.trim() }
    }

    // MARK: Key expiry

    /// Stores `value` under `key`, to expire `duration` after now (whole seconds, rounded up, from
    /// the current time rounded up, so never early: ``ExpiryClock``; `.zero` means never). Key
    /// expiry must be on: see ``enableKeyExpiry(defaultDuration:)``.
    public func set<V: PayloadCodable & Sendable>(
        _ value: V, forKey key: String, expiresAfter duration: Duration
    ) throws(MappedKVError) {
        metrics?.countSet()
        let seconds = MappedKV.expirySeconds(duration)
        try withCore { (core) throws(MappedKVError) in try core.set(value, forKey: key, expiresAfter: seconds) }
    }

    /// Turns on MMKV-compatible key expiry: every value gets a 4-byte expiry time, and values set
    /// without a duration live `defaultDuration` (`.zero`: forever). Expired keys disappear from
    /// every getter, `contains`, `count` and `allKeys`, and are dropped at the next write-back.
    /// On a store with data this rewrites every value, as MMKV does; a ``StoreKind``'s marks are
    /// then written again, never to expire. Times are 32-bit seconds
    /// since 1970, so expiry times past 2106-02-07 are clamped to that date.
    public func enableKeyExpiry(defaultDuration: Duration = .zero) throws(MappedKVError) {
        let seconds = MappedKV.expirySeconds(defaultDuration)
        try withCore { (core) throws(MappedKVError) in
            let wasOn = core.loaded.expiryEnabled
            try core.enableKeyExpiry(defaultDuration: seconds)
            if !wasOn { try core.renewStoreKindMarks() }
        }
    }

    /// Turns key expiry off, removing the expiry time from every value (a rewrite). Keys that have
    /// already expired are dropped.
    public func disableKeyExpiry() throws(MappedKVError) {
        try withCore { (core) throws(MappedKVError) in try core.disableKeyExpiry() }
    }

    /// Whether key expiry is on (meta flag bit 0).
    public var isKeyExpiryEnabled: Bool {
        shared.core.withLock { core in core.loaded.expiryEnabled }
    }

    /// Whole seconds of `duration`, rounded up and clamped to `0...UInt32.max`.
    static func expirySeconds(_ duration: Duration) -> UInt32 {
        let (seconds, attoseconds) = duration.components
        guard seconds >= 0, duration > .zero else { return 0 }
        return UInt32(clamping: seconds + (attoseconds > 0 ? 1 : 0))
    }

    // MARK: Encryption

    /// Whether the store is encrypted.
    public var isEncrypted: Bool {
        shared.core.withLock { core in core.cryptKey != nil }
    }

    /// Re-encrypts the store under `key`, or decrypts it to plain text when `key` is nil.
    ///
    /// This is a full write-back with a fresh IV and an incremented sequence, as MMKV's `reKey`.
    /// Other processes are not told: they must call ``adoptCryptKey(_:)`` with the new key.
    public func rekey(to key: CryptKey?) throws(MappedKVError) {
        try withCore { (core) throws(MappedKVError) in try core.rekey(to: key) }
    }

    /// Reloads the store from its files with `key`, without rewriting anything (MMKV's
    /// `checkReSetCryptKey`): use it after another process changed the key. If the files do not
    /// decode with `key`, this throws and the store keeps its current state.
    public func adoptCryptKey(_ key: CryptKey?) throws(MappedKVError) {
        try withCore { (core) throws(MappedKVError) in try core.adoptCryptKey(key) }
    }

    /// Flushes both files to disk (`msync`). Appends are otherwise left to the kernel, as in MMKV.
    public func sync() throws(MappedKVError) {
        try withCore { (core) throws(MappedKVError) in try core.sync() }
    }

    /// Closes this handle. Later calls on it throw ``MappedKVError/closed(_:)``; closing twice is
    /// harmless. The files close when the last handle on them in this process closes. Change
    /// subscriptions made through this handle end (their streams finish).
    public func close() {
        guard !isClosed.exchange(true, ordering: .acquiringAndReleasing) else { return }
        endChangeSubscriptions()
        StoreRegistry.release(shared)
    }
}
