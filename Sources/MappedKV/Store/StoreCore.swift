import Logging
import MappedKVCrypto
import MappedKVFormat
import MappedKVIO

/// The store proper: the mapped files, the plaintext mirror of the data region, and the index of live keys.
///
/// Not thread-safe: ``MappedKV`` serializes every call. The mirror is a process-private copy of
/// `data[4 ..< 4 + actualSize]`, so values are never served from the shared mapping, except
/// through the mapped index file (``MappedReads``); index slots are offsets into it. Every
/// mutation of the files goes through ``StoreFiles``.
///
/// Its state is in parts (StoreCore+State.swift), each read and written by one concern:
/// ``loaded`` (``LoadedRegion``: the mirror, index and meta), ``tracking`` (``ChangeTracking``:
/// the stamps seen, flushed and indexed, and changes not yet reported), ``mappedReads``,
/// ``lifecycle`` and ``findings``. The invariant between calls: ``loaded`` is the plain text of
/// exactly the bytes its meta's size covers and the last record of every live key in it, and
/// ``observed`` is the meta stamp that state corresponds to. Its concerns live in extensions:
/// reads (`StoreCore+Reads.swift`), appends (`+Appends`), whole-file rewrites (`+WriteBack`),
/// expiry, trim, clear and rekey (`+Maintenance`), and locking and catching up with other
/// processes (`+MultiProcess`). Loading the files is ``StoreLoader``'s job; this type only adopts
/// what it loads, a part at a time.
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

    // The parts every set and get touches. Debug builds check exclusive access dynamically, so
    // the test suite catches any overlapping access; release builds skip the checks (`mappedkv
    // bench` set_int32 and get_int32 show their cost), which is sound because every call runs
    // under ``MappedKV``'s lock and no method modifies a part while another access to it is in
    // progress.

    /// The region as loaded, appended to and rewritten.
    #if !DEBUG
    @exclusivity(unchecked)
    #endif
    var loaded = LoadedRegion()
    /// The files' states this instance has seen, flushed and indexed.
    #if !DEBUG
    @exclusivity(unchecked)
    #endif
    var tracking = ChangeTracking()
    /// Whether gets read through the mappings, and what they read; checked first by every get
    /// (the open-scaling bench's gets at 10^4 keys show the cost of the dynamic check).
    #if !DEBUG
    @exclusivity(unchecked)
    #endif
    var mappedReads = MappedReads()
    /// The open files, the reason the store closed, and whether its memory is released.
    #if !DEBUG
    @exclusivity(unchecked)
    #endif
    var lifecycle = Lifecycle()
    /// A reusable buffer for encoding payloads, so a set allocates nothing once warm.
    #if !DEBUG
    @exclusivity(unchecked)
    #endif
    var scratch: [UInt8] = []

    /// ``ChangeTracking/observed``, published for reads that check it without the mutex
    /// (Store/ObservedStamp.swift).
    let observedStamp: ObservedStamp
    /// What the last loads found.
    var findings = LoadFindings()
    /// The lifetime of values set without one, in seconds; 0 is "never" (MMKV's `m_expiredInSeconds`).
    var defaultExpiryDuration: UInt32 = 0
    /// The store's key; it changes only through ``rekey(to:)`` and ``adoptCryptKey(_:)``.
    var cryptKey: CryptKey?
    /// ``Durability/everyWrite``: every write flushes before it returns.
    let flushesEveryWrite: Bool
    /// How many compactions to make room this instance has done (they grow the reserve, FORMAT.md 2.10).
    var compactionsForRoom = 0
    /// The emptied buffers of the last write batch, for the next one (``takeSpareBatch()``).
    var spareBatch = BatchOperations()
    /// Where write-backs and catch-ups are counted: the metrics of the first handle in this
    /// process that asked for them (``Configuration/metrics``); nil counts nothing.
    var metrics: StoreMetrics?

    /// The meta stamp in the file as of this instance's last load, catch-up or write; setting it
    /// publishes it (``publishObserved()``).
    var observed: MetaStamp {
        get { tracking.observed }
        set {
            tracking.observed = newValue
            publishObserved()
        }
    }

    /// Whether ``releaseMemory()`` dropped the region; setting it withdraws the published stamp,
    /// and clearing it publishes the stamp again.
    var isMemoryReleased: Bool {
        get { lifecycle.isMemoryReleased }
        set {
            lifecycle.isMemoryReleased = newValue
            if newValue { observedStamp.withdraw() } else { publishObserved() }
        }
    }

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
        let privateState =
            mapped == nil ? try Self.loadPrivately(files, configuration: configuration, logger: logger) : nil
        self.lifecycle.files = files
        // After the load has sized the files: the stamp's page is mapped only if the meta holds it.
        self.observedStamp = ObservedStamp(page: files.metaStructMapping())
        if let mapped {
            adoptMapped(mapped, files)
            try ensureCheckpoints(files)
            if tracking.flushedStamp == nil { tracking.flushedStamp = files.metaStamp() }
        } else if let privateState {
            try adopt(privateState, files)
            try ensureCheckpoints(files)
            if privateState.indexOutcome == .decoded { writeIndexFileIfStale(files) }
            // What the open found counts as flushed, unless it stored a repair of the meta's size.
            if tracking.flushedStamp == nil, privateState.region.repair == nil {
                tracking.flushedStamp = files.metaStamp()
            }
        }
        try systemCall { () throws(SystemError) in
            try files.lock.unlock(configuration.isReadOnly ? .shared : .exclusive)
        }
        logger.debug(
            "opened store",
            metadata: [
                "id": "\(location.id)", "readsThroughMappings": "\(mappedReads.isActive)",
                "actualSize": "\(actualSize)",
                "fileSize": "\(files.dataFileSize)", "sequence": "\(loaded.meta.sequence)",
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
        loaded = LoadedRegion(state.region)
        observed = state.stamp
        isMemoryReleased = false
        if let report = state.recovery { findings.recovery = report }
        if let report = state.crashLoss { findings.crashLoss = report }
        if state.needsRewrite { try writeRecovery(files) }
    }

    /// Publishes ``observed`` unless a catch-up is under way or the memory is released.
    func publishObserved() {
        if tracking.publishesObserved && !isMemoryReleased { observedStamp.publish(observed) }
    }

    /// Closes the files; later calls fail with ``MappedKVError/closed(_:)``.
    func close() {
        closeDurably()
        if let files = lifecycle.files { writeIndexFileIfStale(files) }
        dropMappedReads(lifecycle.files)
        lifecycle.files?.close()
        lifecycle.files = nil
        observedStamp.withdraw()
        lifecycle.closedReason = "store '\(location.id)' was closed: open it again to use it"
        loaded.mirror = []
        loaded.index = KeyIndex()
    }

    // MARK: State checks

    /// The open files, or the reason the store is closed.
    @discardableResult
    func openFiles() throws(MappedKVError) -> StoreFiles {
        guard let files = lifecycle.files else {
            throw .closed(lifecycle.closedReason ?? "store '\(location.id)' was closed")
        }
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
        lifecycle.files?.close()
        lifecycle.files = nil
        lifecycle.closedReason = "store '\(location.id)' was closed after an I/O failure (\(error)): open it again"
        return error
    }

    /// Whether an I/O failure closed the store.
    var isClosedAfterFailure: Bool { lifecycle.files == nil }

    var dataFileSize: Int { lifecycle.files?.dataFileSize ?? 0 }
    /// The open data file's device and inode.
    var fileIdentity: FileIdentity? { lifecycle.files?.identity }
    /// Whether a new open of the same path may share this instance: its files are open (not
    /// closed after an I/O failure) and the data file was not deleted.
    var isShareable: Bool { lifecycle.files?.isLinked ?? false }
    var actualSize: Int { mappedReads.isActive ? Int(observed.actualSize) : loaded.mirror.count }
}
