import Logging
import MappedKVCrypto
import MappedKVFormat
import MappedKVIO

/// The store proper: the mapped files, the plaintext mirror of the data region, and the index of live keys.
///
/// Not thread-safe: ``MappedKV`` serializes every call. The mirror is a process-private copy of
/// `data[4 ..< 4 + actualSize]`, so values are never served from the shared mapping; index slots
/// are offsets into it. Every mutation of the files goes through ``StoreFiles``.
///
/// The invariant this type keeps between calls: ``mirror`` is the plain text of exactly the bytes
/// the meta's size covers, ``meta`` is what this instance last wrote or verified, ``index`` holds
/// the last record of every live key in ``mirror``, and ``observed`` is the meta stamp that state
/// corresponds to. Its concerns live in extensions: reads (`StoreCore+Reads.swift`), appends
/// (`+Appends`), whole-file rewrites (`+WriteBack`), expiry, trim, clear and rekey
/// (`+Maintenance`), and locking and catching up with other processes (`+MultiProcess`). Loading
/// the files is ``StoreLoader``'s job; this type only adopts what it loads.
final class StoreCore {
    let location: StoreLocation
    let configuration: Configuration
    let logger: Logger
    let pageSize: Int
    /// The data file size that `clearAll` returns to and `trim` never goes below.
    let expectedCapacity: Int
    /// Whether other processes may share the files (MMKV's `MULTI_PROCESS`).
    let isMultiProcess: Bool
    /// Raised when a change by another process is noticed, so the API layer can report it.
    let signal: ChangeSignal

    // The state every set and get touches. Debug builds check exclusive access dynamically, so the
    // test suite catches any overlapping access; release builds skip the checks (`mappedkv bench`
    // set_int32 shows their cost), which is sound because every call runs under ``MappedKV``'s
    // lock and no method modifies one of these while another access to it is in progress.

    /// The open files; nil once closed.
    #if !DEBUG
    @exclusivity(unchecked)
    #endif
    var files: StoreFiles?
    /// The meta as this instance last wrote or verified it.
    #if !DEBUG
    @exclusivity(unchecked)
    #endif
    var meta = MetaInfo()
    /// The plaintext data region, `[0, actualSize)`.
    #if !DEBUG
    @exclusivity(unchecked)
    #endif
    var mirror: [UInt8] = []
    /// The live keys, as slots in ``mirror``.
    #if !DEBUG
    @exclusivity(unchecked)
    #endif
    var index = KeyIndex()
    /// Records decoded at load or appended since, deletions included (for statistics).
    #if !DEBUG
    @exclusivity(unchecked)
    #endif
    var recordCount = 0
    /// Whether every value carries MMKV's 4-byte expiry suffix (meta flag bit 0).
    #if !DEBUG
    @exclusivity(unchecked)
    #endif
    var expiryEnabled = false
    /// A reusable buffer for encoding payloads, so a set allocates nothing once warm.
    #if !DEBUG
    @exclusivity(unchecked)
    #endif
    var scratch: [UInt8] = []
    /// The cipher stream positioned at the end of the region, for an encrypted store.
    #if !DEBUG
    @exclusivity(unchecked)
    #endif
    var cipher: CFBStream?
    /// The meta stamp in the file as of this instance's last load, catch-up or write.
    #if !DEBUG
    @exclusivity(unchecked)
    #endif
    var observed = MetaStamp(sequence: 0, crcDigest: 0, actualSize: 0) {
        didSet { publishObserved() }
    }
    /// ``observed``, published for reads that check it without the mutex (Store/ObservedStamp.swift).
    let observedStamp: ObservedStamp
    /// False while a catch-up runs: it publishes the stamp it caught up to only after it has raised
    /// the change signal, so that a read that finds the published stamp current finds the signal too.
    var publishesObserved = true

    /// Why the store is closed, once it is.
    var closedReason: String?
    /// The data file's header as loaded.
    var header: UInt32 = 0
    /// The lifetime of values set without one, in seconds; 0 is "never" (MMKV's `m_expiredInSeconds`).
    var defaultExpiryDuration: UInt32 = 0
    /// The store's key; it changes only through ``rekey(to:)`` and ``adoptCryptKey(_:)``.
    var cryptKey: CryptKey?
    /// Changes by other processes noticed and not yet reported.
    var pendingChanges: [ExternalChange] = []
    /// What the last load that found damage did about it.
    var recoveryReport: RecoveryReport?
    /// What the last load that found writes lost to a crash kept and lost.
    var crashLossReport: CrashLossReport?
    /// Whether ``releaseMemory()`` dropped the mirror and index; the next access reloads them.
    var isMemoryReleased = false {
        didSet { if isMemoryReleased { observedStamp.withdraw() } else { publishObserved() } }
    }
    /// The meta stamp at this instance's last durability point (or open): a close finds nothing
    /// to flush while the stamp is still this one.
    var flushedStamp: MetaStamp?
    /// ``Durability/everyWrite``: every write flushes before it returns.
    let flushesEveryWrite: Bool
    /// How many compactions to make room this instance has done (they grow the reserve, FORMAT.md 2.10).
    var compactionsForRoom = 0
    /// The emptied buffers of the last write batch, for the next one (``takeSpareBatch()``).
    var spareBatch = BatchOperations()
    /// Where write-backs and catch-ups are counted: the metrics of the first handle in this
    /// process that asked for them (``Configuration/metrics``); nil counts nothing.
    var metrics: StoreMetrics?
    /// How the last load got its index (the index file, or decoding the log).
    var indexOutcome = IndexedLoad.Outcome.decoded
    /// The state the index file describes, as far as this instance knows: the one it last wrote
    /// or adopted; nil when unknown.
    var indexFileStamp: MetaStamp?
    /// Whether gets read through the mapped index file and the data mapping (``MappedOpen``,
    /// StoreCore+MappedReads.swift); checked first by every get.
    // Without the dynamic exclusivity check, which every get (mapped or not) would pay: the
    // open-scaling bench's gets at 10^4 keys.
    #if !DEBUG
    @exclusivity(unchecked)
    #endif
    var readsThroughMappings = false
    /// The mapped index file while ``readsThroughMappings``.
    var mappedFile: MappedIndexFile?
    /// The plaintext pages of an encrypted store while ``readsThroughMappings``.
    var decryptedPages: DecryptedPages?
    /// The live keys while ``readsThroughMappings`` (the mapped file's, changed by the overlay's records).
    var mappedLiveCount = 0
    /// Set by a write-back (``commit(_:_:staleEnd:sync:)``): a multi-process write then writes the
    /// index file for the new state before it releases the lock.
    var rewroteRegion = false
    /// Set while a load must not use the index file (a lookup found it damaged).
    var skipsIndexFileOnce = false

    /// Opens or creates the store and loads it strictly; nothing on disk changes if this throws,
    /// except finishing an interrupted write-back or the size of an interrupted append.
    init(
        location: StoreLocation, configuration: Configuration, logger: Logger, signal: ChangeSignal
    ) throws(MappedKVError) {
        self.location = location
        self.configuration = configuration
        self.logger = logger
        self.pageSize = PageSize.current
        self.expectedCapacity = PageSize.roundUp(max(configuration.expectedCapacity, 0), pageSize: pageSize)
        self.isMultiProcess = configuration.isMultiProcess
        self.signal = signal
        self.cryptKey = configuration.cryptKey
        self.flushesEveryWrite = configuration.durability == .everyWrite

        // Returns holding the lock: exclusive for read-write (creation and sizing happen under it), else shared.
        let files = try StoreFiles.open(
            location, readOnly: configuration.isReadOnly, multiProcess: configuration.isMultiProcess,
            processLock: configuration.processLock, createsIfMissing: configuration.createsIfMissing)
        let mapped = Self.mappedOpen(files, configuration: configuration, location: location, logger: logger)
        let loaded = mapped == nil ? try Self.loadPrivately(files, configuration: configuration, logger: logger) : nil
        self.files = files
        // After the load has sized the files: the stamp's page is mapped only if the meta holds it.
        self.observedStamp = ObservedStamp(page: files.metaStructMapping())
        if let mapped {
            adoptMapped(mapped, files)
            try ensureCheckpoints(files)
            if flushedStamp == nil { flushedStamp = files.metaStamp() }
        } else if let loaded {
            try adopt(loaded, files)
            try ensureCheckpoints(files)
            if loaded.indexOutcome == .decoded { writeIndexFileIfStale(files) }
            // What the open found counts as flushed, unless it stored a repair of the meta's size.
            if flushedStamp == nil, loaded.region.repair == nil { flushedStamp = files.metaStamp() }
        }
        try systemCall { () throws(SystemError) in
            try files.lock.unlock(configuration.isReadOnly ? .shared : .exclusive)
        }
        logger.debug(
            "opened store",
            metadata: [
                "id": "\(location.id)", "readsThroughMappings": "\(readsThroughMappings)",
                "actualSize": "\(actualSize)",
                "fileSize": "\(files.dataFileSize)", "sequence": "\(meta.sequence)",
                "multiProcess": "\(isMultiProcess)",
            ])
    }

    /// Loads the files for the private state (the mirror and index), under the lock the open
    /// holds, and sizes them for writing.
    private static func loadPrivately(
        _ files: StoreFiles, configuration: Configuration, logger: Logger
    ) throws(MappedKVError) -> StoreLoader.LoadedState {
        let access: StoreLoader.Access = configuration.isReadOnly ? .readOnly : .exclusive
        let policy = StoreLoader.DamagePolicy.consult(configuration.recoveryHandler)
        let outcome = try StoreLoader.load(
            files, key: configuration.cryptKey, treatsStoreAsPlain: configuration.treatsStoreAsPlain, access: access,
            policy: policy, indexFile: configuration.usesIndexFile ? files.location.indexPath : nil, logger: logger)
        guard case .loaded(var state) = outcome else {
            throw .corrupted(id: files.location.id, reason: .interruptedWriteBack)
        }
        if !configuration.isReadOnly {
            let pageSize = PageSize.current
            let capacity = PageSize.roundUp(max(configuration.expectedCapacity, 0), pageSize: pageSize)
            if try files.ensureSizes(minimumDataSize: capacity, pageSize: pageSize) {
                files.announceResize(&state.region.meta)
            }
            state.stamp = files.metaStamp()
        }
        return state
    }

    /// The state for reading through the mappings (``MappedOpen``), if the store may and the
    /// index file describes it, and the files need no growth first; it holds the mapped-reader
    /// lock of a multi-process store.
    private static func mappedOpen(
        _ files: StoreFiles, configuration: Configuration, location: StoreLocation, logger: Logger
    ) -> MappedOpen? {
        let pageSize = PageSize.current
        let capacity = PageSize.roundUp(max(configuration.expectedCapacity, 0), pageSize: pageSize)
        let sized =
            configuration.isReadOnly
            || (files.dataFileSize >= capacity && files.dataFileSize % pageSize == 0
                && files.metaFileSize >= pageSize && files.metaFileSize % pageSize == 0)
        guard sized, MappedOpen.isEligible(configuration, files: files, encrypted: configuration.cryptKey != nil),
            let open = MappedOpen.attempt(files, key: configuration.cryptKey, path: location.indexPath, logger: logger)
        else { return nil }
        if configuration.isMultiProcess, !files.holdMappedReaderLock() { return nil }
        return open
    }

    /// Takes over a loaded state, writing it back first if it is a recovery the files do not hold.
    func adopt(_ state: StoreLoader.LoadedState, _ files: StoreFiles) throws(MappedKVError) {
        dropMappedReads(files)  // a loaded state is a private one
        noteIndexOutcome(state)
        meta = state.region.meta
        header = state.region.header
        mirror = state.region.plain
        index = state.region.index
        recordCount = state.region.recordCount
        cipher = state.region.cipher
        expiryEnabled = state.region.expiryEnabled
        observed = state.stamp
        isMemoryReleased = false
        if let report = state.recovery { recoveryReport = report }
        if let report = state.crashLoss { crashLossReport = report }
        if state.needsRewrite { try writeRecovery(files) }
    }

    /// Publishes ``observed`` unless a catch-up is under way or the memory is released.
    func publishObserved() {
        if publishesObserved && !isMemoryReleased { observedStamp.publish(observed) }
    }

    /// Closes the files; later calls fail with ``MappedKVError/closed(_:)``.
    func close() {
        closeDurably()
        if let files { writeIndexFileIfStale(files) }
        dropMappedReads(files)
        files?.close()
        files = nil
        observedStamp.withdraw()
        closedReason = "store '\(location.id)' was closed: open it again to use it"
        mirror = []
        index = KeyIndex()
    }

    // MARK: State checks

    /// The open files, or the reason the store is closed.
    @discardableResult
    func openFiles() throws(MappedKVError) -> StoreFiles {
        guard let files else { throw .closed(closedReason ?? "store '\(location.id)' was closed") }
        return files
    }

    /// The open files of a store that may be written.
    func writableFiles() throws(MappedKVError) -> StoreFiles {
        let files = try openFiles()
        guard !configuration.isReadOnly else { throw .readOnly(id: location.id) }
        return files
    }

    /// Closes the files after an I/O failure left them in an unknown state, so nothing writes on top.
    func poison(_ error: MappedKVError) -> MappedKVError {
        logger.error("store failed; closing it", metadata: ["id": "\(location.id)", "error": "\(error)"])
        files?.close()
        files = nil
        closedReason = "store '\(location.id)' was closed after an I/O failure (\(error)): open it again"
        return error
    }

    /// Whether an I/O failure closed the store.
    var isClosedAfterFailure: Bool { files == nil }

    var dataFileSize: Int { files?.dataFileSize ?? 0 }
    /// The open data file's device and inode.
    var fileIdentity: FileIdentity? { files?.identity }
    /// Whether a new open of the same path may share this instance: its files are open (not
    /// closed after an I/O failure) and the data file was not deleted.
    var isShareable: Bool { files?.isLinked ?? false }
    var actualSize: Int { readsThroughMappings ? Int(observed.actualSize) : mirror.count }
}
