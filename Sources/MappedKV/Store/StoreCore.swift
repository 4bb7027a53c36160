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
/// In multi-process mode every read first compares the meta stamp in the shared mapping with the
/// one last seen (no system call); only when it differs does it take the shared `flock` and reload
/// what changed. Every write takes the exclusive `flock`, catches up, writes, and releases it.
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
    // test suite catches any overlapping access; release builds skip the checks (they cost about
    // 15% of a set), which is sound because every call runs under ``MappedKV``'s lock and no
    // method modifies one of these while another access to it is in progress.
    #if DEBUG
    private var files: StoreFiles?
    /// The meta as this instance last wrote or verified it.
    private(set) var meta: MetaInfo
    /// The plaintext data region, `[0, actualSize)`.
    private(set) var mirror: [UInt8]
    /// The live keys, as slots in ``mirror``.
    private(set) var index: KeyIndex
    /// Records decoded at load or appended since, deletions included (for statistics).
    private(set) var recordCount: Int
    /// Whether every value carries MMKV's 4-byte expiry suffix (meta flag bit 0).
    private(set) var expiryEnabled: Bool
    /// A reusable buffer for encoding payloads, so a set allocates nothing once warm.
    private var scratch: [UInt8] = []
    /// The cipher stream positioned at the end of the region, for an encrypted store.
    private var cipher: CFBStream?
    /// The meta stamp in the file as of this instance's last load, catch-up or write.
    private var observed: MetaStamp
    #else
    @exclusivity(unchecked) private var files: StoreFiles?
    @exclusivity(unchecked) private(set) var meta: MetaInfo
    @exclusivity(unchecked) private(set) var mirror: [UInt8]
    @exclusivity(unchecked) private(set) var index: KeyIndex
    @exclusivity(unchecked) private(set) var recordCount: Int
    @exclusivity(unchecked) private(set) var expiryEnabled: Bool
    @exclusivity(unchecked) private var scratch: [UInt8] = []
    @exclusivity(unchecked) private var cipher: CFBStream?
    @exclusivity(unchecked) private var observed: MetaStamp
    #endif
    private var closedReason: String?
    /// The data file's header as loaded.
    private(set) var header: UInt32
    /// The lifetime of values set without one, in seconds; 0 is "never" (MMKV's `m_expiredInSeconds`).
    private(set) var defaultExpiryDuration: UInt32 = 0
    /// The store's key; it changes only through ``rekey(to:)`` and ``adoptKey(_:)``.
    private(set) var cryptKey: CryptKey?
    /// Changes by other processes noticed and not yet reported.
    private var pendingChanges: [ExternalChange] = []
    /// What the last load that found damage did about it.
    private(set) var recoveryReport: RecoveryReport?

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

        // Returns holding the flock: exclusive for read-write (creation and sizing happen under it), else shared.
        let files = try StoreFiles.open(
            location, readOnly: configuration.isReadOnly, multiProcess: configuration.isMultiProcess)
        let access: LoadAccess = configuration.isReadOnly ? .readOnly : .exclusive
        let policy = DamagePolicy.consult(configuration.recoveryHandler)
        guard
            case .loaded(var state) = try StoreCore.load(
                files, key: configuration.cryptKey, access: access, policy: policy, logger: logger)
        else {
            throw .corrupted(location.id, .interruptedWriteBack)
        }
        if !configuration.isReadOnly {
            // Growing a file other processes may map: they learn of it through the sequence.
            if try files.ensureSizes(minimumDataSize: expectedCapacity, pageSize: pageSize),
                state.region.meta.version >= .sequence
            {
                state.region.meta.sequence &+= 1
                files.writeSequence(state.region.meta.sequence)
            }
            state.stamp = files.metaStamp()
        }
        self.files = files
        self.cryptKey = configuration.cryptKey
        self.cipher = state.region.cipher
        self.meta = state.region.meta
        self.header = state.region.header
        self.mirror = state.region.plain
        self.index = state.region.index
        self.recordCount = state.region.recordCount
        self.expiryEnabled = state.region.expiryEnabled
        self.observed = state.stamp
        self.recoveryReport = state.recovery
        if state.needsRewrite { try writeRecovery(files) }
        do { try files.lock.unlock(configuration.isReadOnly ? .shared : .exclusive) } catch { throw .system(error) }
        logger.debug(
            "opened store",
            metadata: [
                "id": "\(location.id)", "keys": "\(index.count)", "actualSize": "\(mirror.count)",
                "fileSize": "\(files.dataFileSize)", "sequence": "\(meta.sequence)",
                "multiProcess": "\(isMultiProcess)",
            ])
    }

    /// Everything a load reads from the files.
    struct LoadedState {
        /// The region as loaded (or as recovered).
        var region: SoundRegion
        var stamp: MetaStamp
        /// What was done about damage, if any was found.
        var recovery: RecoveryReport?
        /// The state is a recovery that the files do not hold yet: a full write-back must follow.
        var needsRewrite = false
    }

    /// What a load may do about an interrupted write.
    enum LoadAccess {
        /// Nothing: a read-only instance repairs in memory or reports the damage.
        case readOnly
        /// The shared lock is held: a repair needs the exclusive one first.
        case shared
        /// The exclusive lock (or single-process ownership) and write access: repairs are written.
        case exclusive
    }

    /// Who decides about damage found by a load.
    enum DamagePolicy {
        /// The configured handler, or ``RecoveryDecision/default(for:)`` without one.
        case consult(RecoveryHandler?)
        /// Nobody: damage throws (for reloading with a candidate key, which must change nothing).
        case fail
    }

    /// The result of a load.
    enum LoadOutcome {
        /// The files were read.
        case loaded(LoadedState)
        /// An interrupted write must be repaired, or damage handled, which needs the exclusive lock.
        case needsExclusiveLock
    }

    /// Reads the files into a fresh state, remapping them at their current sizes first.
    ///
    /// Interrupted writes are repaired without loss (with ``LoadAccess/exclusive``; in memory
    /// only when read-only): a write-back that left its journal is finished from it, and a meta
    /// whose CRC covers more than its size is completed (see ``LoadAssessment``). Damage goes to
    /// `policy`: `.fail` throws and changes nothing; `.recover` and `.discard` copy both files
    /// aside (when writable) and return a state that the caller must write back
    /// (``LoadedState/needsRewrite``).
    static func load(
        _ files: StoreFiles, key: CryptKey?, access: LoadAccess, policy: DamagePolicy, logger: Logger
    ) throws(MappedKVError) -> LoadOutcome {
        let id = files.location.id
        try files.refreshMappings()
        if case .some(let journal) = try files.readJournal() {
            switch journalAction(journal, files: files) {
            case .ignore:
                if access != .readOnly { try files.removeJournal() }
            case .redo(let journal):
                switch access {
                case .readOnly: throw .corrupted(id, .interruptedWriteBack)
                case .shared: return .needsExclusiveLock
                case .exclusive:
                    logger.warning(
                        "finishing an interrupted write-back",
                        metadata: ["id": "\(id)", "sequence": "\(journal.meta.sequence)"])
                    try files.ensureMetaSize(pageSize: PageSize.current)
                    try files.applyWriteBack(journal, staleEnd: files.dataFileSize - 4, sync: true)
                    try files.removeJournal()
                }
            }
        }
        switch LoadAssessment.assess(dataFile: files.dataFileBytes, metaFile: files.metaFileBytes, key: key) {
        case .sound(let region):
            if let repair = region.repair {
                switch access {
                case .shared: return .needsExclusiveLock
                case .exclusive:
                    logger.warning(
                        "repairing the meta size",
                        metadata: [
                            "id": "\(id)", "repair": "\(repair)", "actualSize": "\(region.meta.actualSize)",
                        ])
                    try files.ensureMetaSize(pageSize: PageSize.current)
                    files.writeMeta(region.meta, .crcAndSizeOnly)
                case .readOnly: break
                }
            }
            return .loaded(LoadedState(region: region, stamp: files.metaStamp()))
        case .damaged(let finding):
            if access == .shared { return .needsExclusiveLock }
            let event = finding.event(storeID: id, isReadOnly: access == .readOnly)
            logger.error("store damaged", metadata: ["id": "\(id)", "damage": "\(event)"])
            let decision: RecoveryDecision
            switch policy {
            case .fail: decision = .fail
            case .consult(let handler): decision = handler?(event) ?? .default(for: event)
            }
            guard decision != .fail else { throw .corrupted(id, finding.reason) }
            var quarantined: [String] = []
            if access == .exclusive {
                quarantined = try Quarantine.copy(files)
                logger.error("copied the damaged files aside", metadata: ["id": "\(id)", "copies": "\(quarantined)"])
            }
            let region = decision == .recover ? finding.kept : LoadAssessment.blank(finding.kept)
            logger.error(
                "recovering damaged store",
                metadata: [
                    "id": "\(id)", "decision": "\(decision)", "keys": "\(region.index.count)",
                    "inMemoryOnly": "\(access == .readOnly)",
                ])
            let report = RecoveryReport(event: event, decision: decision, quarantinedFiles: quarantined)
            return .loaded(
                LoadedState(
                    region: region, stamp: files.metaStamp(), recovery: report, needsRewrite: access == .exclusive))
        }
    }

    /// A cipher stream at the start of a region encrypted under `meta`.
    static func stream(for meta: MetaInfo, key: CryptKey) -> CFBStream {
        CFBStream(key: key, iv: iv(for: meta, key: key))
    }

    /// The IV of a region: the meta's from version 2, else the key's first 16 bytes.
    static func iv(for meta: MetaInfo, key: CryptKey) -> [UInt8] {
        meta.version >= .randomIV ? meta.iv.bytes : key.legacyIV
    }

    /// What to do with a write-back journal found at load.
    enum JournalAction {
        /// It never took effect (torn, or the marker is absent) or was completed and appended
        /// to since: delete it.
        case ignore
        /// The write-back may be incomplete: finish it (doing it again is harmless).
        case redo(WriteBackJournal)
    }

    /// Decides from the meta whether a journal's write-back may be incomplete. It may be when the
    /// meta carries the marker sequence and either its CRC and size are the old or the new ones,
    /// or any other byte of the struct differs from the new meta (the whole-struct store was cut
    /// short). A finished write-back followed by appends differs from the new meta only in its
    /// CRC and size, which appends change and nothing else does.
    static func journalAction(_ journal: WriteBackJournal?, files: StoreFiles) -> JournalAction {
        guard let journal else { return .ignore }
        let stamp = files.metaStamp()
        guard stamp.sequence == journal.markerSequence else { return .ignore }
        if stamp.crcDigest == journal.base.crcDigest || stamp.crcDigest == journal.meta.crcDigest,
            stamp.actualSize == journal.base.actualSize || stamp.actualSize == journal.meta.actualSize
        {
            return .redo(journal)
        }
        let stored = files.metaFileBytes
        guard stored.count >= MetaInfo.size else { return .redo(journal) }
        let final = journal.meta.serialized
        let appendFields = [
            MetaInfo.Offset.crcDigest..<(MetaInfo.Offset.crcDigest + 4),
            MetaInfo.Offset.actualSize..<(MetaInfo.Offset.actualSize + 4),
        ]
        for offset in 0..<MetaInfo.size where !appendFields.contains(where: { $0.contains(offset) }) {
            if stored[offset] != final[offset] { return .redo(journal) }
        }
        return .ignore
    }

    /// Decodes records of `mirror` from `start` into `index`; the last record of a key wins.
    /// Also says whether any key is not UTF-8 (a sign of a wrong key, for an encrypted store);
    /// such keys are filed under their UTF-8 repair (see ``ValueSlot/keyIsRepaired``).
    static func buildIndex(
        _ index: inout KeyIndex, from mirror: [UInt8], start: Int
    ) -> (summary: DecodeSummary, hasNonUTF8Key: Bool) {
        var hasNonUTF8Key = false
        let summary = mirror.withUnsafeBytes { bytes in
            RecordDecoder.decode(bytes, from: start, skipsHolder: start == 0) { record in
                var slot = ValueSlot(record)
                slot.keyIsRepaired = !UTF8Check.isValid(UnsafeRawBufferPointer(rebasing: bytes[record.keyRange]))
                if slot.keyIsRepaired { hasNonUTF8Key = true }
                if record.isDeletion {
                    index.remove(keyOf: slot, in: bytes)
                } else {
                    index.update(slot, in: bytes)
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

    // MARK: Multi-process

    /// Takes the inter-process lock; true if another process may have written since.
    private func takeLock(_ files: StoreFiles, _ kind: LockKind) throws(MappedKVError) -> Bool {
        do { return try files.lock.lock(kind) } catch { throw .system(error) }
    }

    /// Releases one level of the inter-process lock. A failure closes the store, which releases it.
    private func releaseLock(_ kind: LockKind) {
        guard let files else { return }
        do { try files.lock.unlock(kind) } catch { _ = poison(.system(error)) }
    }

    /// Makes the in-memory state current before a read. In the steady state this is three loads
    /// from the meta mapping and no system call.
    @inline(__always)
    func prepareRead() throws(MappedKVError) {
        guard let files else { throw .closed(closedReason ?? "the store was closed") }
        guard isMultiProcess, files.metaStamp() != observed else { return }
        try catchUpUnderSharedLock(files)
    }

    @inline(never)
    private func catchUpUnderSharedLock(_ files: StoreFiles) throws(MappedKVError) {
        _ = try takeLock(files, .shared)
        defer { releaseLock(.shared) }
        try catchUp(files)
    }

    /// Runs a write under the exclusive lock, after catching up with other processes' writes.
    private func writing<R>(_ body: (StoreFiles) throws(MappedKVError) -> R) throws(MappedKVError) -> R {
        let files = try writableFiles()
        guard isMultiProcess else { return try body(files) }
        let changed = try takeLock(files, .exclusive)
        defer { releaseLock(.exclusive) }
        if changed { try catchUp(files) }
        return try body(files)
    }

    /// Runs `body` holding the exclusive inter-process lock, up to date with the files; with
    /// `blocking` false, returns nil at once if another process holds the lock.
    func exclusively<R>(blocking: Bool, _ body: () throws -> R) throws -> R? {
        let files = try openFiles()
        guard isMultiProcess else { return try body() }
        let changed: Bool
        if blocking {
            changed = try takeLock(files, .exclusive)
        } else {
            let attempt: Bool?
            do { attempt = try files.lock.tryLockExclusive() } catch { throw MappedKVError.system(error) }
            guard let attempt else { return nil }
            changed = attempt
        }
        defer { releaseLock(.exclusive) }
        if changed { try catchUp(files) }
        return try body()
    }

    /// Looks for other processes' changes now (MMKV's `checkContentChanged`); true if one was found.
    func checkForChanges() throws(MappedKVError) -> Bool {
        let files = try openFiles()
        guard isMultiProcess else { return false }
        let before = pendingChanges.count
        _ = try takeLock(files, .shared)
        defer { releaseLock(.shared) }
        try catchUp(files)
        return pendingChanges.count > before
    }

    /// The changes noticed since the last call.
    func takePendingChanges() -> [ExternalChange] {
        signal.pending.store(false, ordering: .relaxed)
        defer { pendingChanges = [] }
        return pendingChanges
    }

    /// Brings the state up to date with the files, under a lock already held (MMKV-FORMAT.md 6.3):
    /// nothing changed, an append (decode just the tail), or anything else (full reload).
    private func catchUp(_ files: StoreFiles) throws(MappedKVError) {
        let stamp = files.metaStamp()
        let fileSize = try files.currentDataFileSize()
        guard stamp != observed || fileSize != files.dataFileSize else { return }
        let change: ExternalChange.Kind
        if stamp.sequence == observed.sequence, fileSize == files.dataFileSize, let records = loadTail(files, stamp) {
            change = .appended(records: records)
        } else {
            try reload(files, key: cryptKey, policy: .consult(configuration.recoveryHandler))
            change = .reloaded
        }
        logger.trace("caught up with another process", metadata: ["id": "\(location.id)", "change": "\(change)"])
        pendingChanges.append(ExternalChange(storeID: location.id, kind: change, sequence: meta.sequence))
        signal.pending.store(true, ordering: .relaxed)
    }

    /// Decodes just the records another process appended, if the new bytes extend the old CRC to
    /// the stored one; returns how many, or nil when a full reload is needed instead.
    private func loadTail(_ files: StoreFiles, _ stamp: MetaStamp) -> Int? {
        let oldLength = mirror.count
        let newLength = Int(stamp.actualSize)
        guard meta.holdsActualSize, newLength > oldLength, 4 + newLength <= files.dataFileSize else { return nil }
        let tail = UnsafeRawBufferPointer(rebasing: files.dataFileBytes[(4 + oldLength)..<(4 + newLength)])
        guard CRC32.update(meta.crcDigest, tail) == stamp.crcDigest else { return nil }
        let stream = cipher?.copy()
        mirror.append(contentsOf: tail)
        if let stream {
            mirror.withUnsafeMutableBytes { stream.decrypt(UnsafeMutableRawBufferPointer(rebasing: $0[oldLength...])) }
        }
        let (summary, _) = StoreCore.buildIndex(&index, from: mirror, start: oldLength)
        guard summary.error == nil else { return nil }  // the full reload rebuilds mirror and index
        if let stream { cipher = stream }
        meta.crcDigest = stamp.crcDigest
        meta.actualSize = stamp.actualSize
        recordCount += summary.recordCount
        observed = stamp
        return summary.recordCount
    }

    /// Reloads everything from the files with `key`, upgrading to the exclusive lock if an
    /// interrupted write must be repaired or damage handled first.
    private func reload(_ files: StoreFiles, key: CryptKey?, policy: DamagePolicy) throws(MappedKVError) {
        let access: LoadAccess =
            configuration.isReadOnly
            ? .readOnly : (!isMultiProcess || files.lock.exclusiveCount > 0 ? .exclusive : .shared)
        switch try StoreCore.load(files, key: key, access: access, policy: policy, logger: logger) {
        case .loaded(let state):
            try adopt(state, files)
        case .needsExclusiveLock:
            _ = try takeLock(files, .exclusive)
            defer { releaseLock(.exclusive) }
            guard
                case .loaded(let state) = try StoreCore.load(
                    files, key: key, access: .exclusive, policy: policy, logger: logger)
            else {
                throw .corrupted(location.id, .interruptedWriteBack)
            }
            try adopt(state, files)
        }
    }

    /// Writes a recovered state back as a fresh region (the damaged files were copied aside):
    /// every stale byte past it is zeroed and the sequence increments, so the files are sound again.
    private func writeRecovery(_ files: StoreFiles) throws(MappedKVError) {
        if try files.ensureSizes(minimumDataSize: expectedCapacity, pageSize: pageSize), meta.version >= .sequence {
            meta.sequence &+= 1
            files.writeSequence(meta.sequence)
        }
        let currentSize = files.dataFileSize
        let liveCount = index.count
        let page = pageSize
        try rewrite(files, needSync: true, staleEnd: max(0, currentSize - 4)) { length in
            FileSizePolicy.sizeForWriteBack(
                fileSize: currentSize, liveLength: length, incomingLength: 0,
                liveCount: liveCount, needSync: true, pageSize: page)
        }
        logger.error(
            "recovered store written back",
            metadata: ["id": "\(location.id)", "keys": "\(index.count)", "sequence": "\(meta.sequence)"])
    }

    /// Takes over a loaded state, writing it back first if it is a recovery the files do not hold.
    private func adopt(_ state: LoadedState, _ files: StoreFiles) throws(MappedKVError) {
        meta = state.region.meta
        header = state.region.header
        mirror = state.region.plain
        index = state.region.index
        recordCount = state.region.recordCount
        cipher = state.region.cipher
        expiryEnabled = state.region.expiryEnabled
        observed = state.stamp
        if let report = state.recovery { recoveryReport = report }
        if state.needsRewrite { try writeRecovery(files) }
    }

    /// Reloads the store with `key` without rewriting anything (MMKV's `checkReSetCryptKey`).
    /// If the files do not decode with it, this throws and nothing changes.
    func adoptKey(_ key: CryptKey?) throws(MappedKVError) {
        let files = try openFiles()
        if isMultiProcess { _ = try takeLock(files, .shared) }
        defer { if isMultiProcess { releaseLock(.shared) } }
        try reload(files, key: key, policy: .fail)
        cryptKey = key
    }

    var dataFileSize: Int { files?.dataFileSize ?? 0 }
    /// The open data file's device and inode.
    var fileIdentity: FileIdentity? { files?.identity }
    /// Whether a new open of the same path may share this instance: its files are open (not
    /// closed after an I/O failure) and the data file was not deleted.
    var isShareable: Bool { files?.isLinked ?? false }
    var actualSize: Int { mirror.count }

    // MARK: Reads

    /// Every live key, in no particular order.
    func keys() throws(MappedKVError) -> [String] {
        try prepareRead()
        let now = expiryEnabled ? configuration.clock.now() : 0
        return mirror.withUnsafeBytes { bytes in
            var keys: [String] = []
            keys.reserveCapacity(index.count)
            index.forEachSlot { slot in
                if liveValueRange(slot, now: now) != nil {
                    keys.append(String(decoding: bytes[slot.keyRange], as: UTF8.self))
                }
            }
            return keys
        }
    }

    /// The number of live keys.
    func count() throws(MappedKVError) -> Int {
        try prepareRead()
        guard expiryEnabled else { return index.count }
        let now = configuration.clock.now()
        var live = 0
        index.forEachSlot { slot in if liveValueRange(slot, now: now) != nil { live += 1 } }
        return live
    }

    /// Whether `key` is live.
    func contains(_ key: String) throws(MappedKVError) -> Bool {
        try prepareRead()
        return liveValueRange(forKey: key) != nil
    }

    /// Calls `body` with the UTF-8 bytes of `key`, without copying them when the string is native.
    @inline(__always)
    static func withBytes<R>(of key: String, _ body: (UnsafeRawBufferPointer) -> R) -> R {
        if let result = key.utf8.withContiguousStorageIfAvailable({ body(UnsafeRawBufferPointer($0)) }) {
            return result
        }
        return Array(key.utf8).withUnsafeBytes(body)
    }

    /// The slot of `key`, or nil if it is absent.
    @inline(__always)
    func slot(forKey key: String) -> ValueSlot? {
        if let slot = mirror.withUnsafeBytes({ bytes in Self.withBytes(of: key) { index.slot(for: $0, in: bytes) } }) {
            return slot
        }
        return index.repairedCount > 0 ? repairedSlot(forKey: key) : nil
    }

    /// The slot of a key that is not UTF-8 and whose repair is `key` (out of line: the rare path).
    @inline(never)
    private func repairedSlot(forKey key: String) -> ValueSlot? {
        mirror.withUnsafeBytes { bytes in Self.withBytes(of: key) { index.repairedSlot(for: $0, in: bytes) } }
    }

    /// The value bytes of a slot without any expiry suffix, or nil if the value has expired.
    /// A value shorter than the suffix is returned as it is, as MMKV does.
    @inline(__always)
    func liveValueRange(_ slot: ValueSlot, now: UInt32) -> Range<Int>? {
        let range = slot.valueRange
        guard expiryEnabled else { return range }
        guard let time = mirror.withUnsafeBytes({ ExpirySuffix.time(of: UnsafeRawBufferPointer(rebasing: $0[range])) })
        else {
            return range
        }
        return ExpirySuffix.isExpired(time, now: now) ? nil : range.dropLast(ExpirySuffix.length)
    }

    /// The live value range of `key`, or nil if it is absent or expired.
    @inline(__always)
    func liveValueRange(forKey key: String) -> Range<Int>? {
        guard let slot = slot(forKey: key) else { return nil }
        guard expiryEnabled else { return slot.valueRange }
        return liveValueRange(slot, now: configuration.clock.now())
    }

    // MARK: Writes

    /// Encodes `value` and appends it as the new record of `key`, expiring after `duration` seconds
    /// (nil: the store's default; 0: never) when key expiry is on.
    func set<V: PayloadCodable>(
        _ value: V, forKey key: String, expiresAfter duration: UInt32? = nil
    ) throws(MappedKVError) {
        // Payloads are encoded one after another into the scratch buffer, which is emptied only
        // once it passes a few KiB (emptying an array costs more than a small set), and dropped
        // when a large value left it with a large capacity.
        var buffer = scratch
        scratch = []
        if buffer.count > Self.scratchLimit {
            if buffer.capacity > 16 * Self.scratchLimit { buffer = [] } else { buffer.removeAll(keepingCapacity: true) }
        }
        let start = buffer.count
        defer { scratch = buffer }
        value.encodePayload(into: &buffer)
        try buffer.withRawBytes { (all) throws(MappedKVError) in
            try setPayload(UnsafeRawBufferPointer(rebasing: all[start...]), forKey: key, expiresAfter: duration)
        }
    }

    /// The bytes of encoded payloads the scratch buffer accumulates before it is emptied.
    private static let scratchLimit = 4_096

    /// Appends a record holding `payload` (plus the expiry suffix when expiry is on) for `key`.
    func setPayload(
        _ payload: UnsafeRawBufferPointer, forKey key: String, expiresAfter duration: UInt32? = nil
    ) throws(MappedKVError) {
        try Self.validate(key: key)
        guard !payload.isEmpty else {
            throw .invalidArgument("an empty payload would be read as a deletion; encode empty values as 00")
        }
        guard payload.count <= RecordLimits.maximumValueLength else { throw .valueTooLarge(payload.count) }
        try writing { (files) throws(MappedKVError) in
            // Another process may have turned expiry on or off while this one waited for the lock.
            let suffixLength = expiryEnabled ? ExpirySuffix.length : 0
            guard payload.count + suffixLength <= RecordLimits.maximumValueLength else {
                throw .valueTooLarge(payload.count)
            }
            if duration != nil && !expiryEnabled {
                throw .invalidArgument("an expiry duration needs key expiry enabled on the store")
            }
            let keyLength = key.utf8.count
            let valueLength = payload.count + suffixLength
            let recordLength = Record.encodedSize(keyLength: keyLength, valueLength: valueLength)
            if index.isEmpty || needsRandomIV || meta.version < .flag {
                try writeBack(files, incomingLength: recordLength, needSync: !index.isEmpty)
            } else if recordLength >= spaceLeft(files) {
                try makeRoom(files, incomingLength: recordLength)
            }
            let start = mirror.count
            Varint.append(UInt64(keyLength), to: &mirror)
            let keyStart = mirror.count
            Self.withBytes(of: key) { mirror.append(contentsOf: $0) }
            Varint.append(UInt64(valueLength), to: &mirror)
            let valueStart = mirror.count
            mirror.append(contentsOf: payload)
            if expiryEnabled {
                let expiry = ExpirySuffix.expiration(
                    now: configuration.clock.now(), duration: duration ?? defaultExpiryDuration)
                ExpirySuffix.append(expiry, to: &mirror)
            }
            commitAppend(files, from: start)
            let slot = ValueSlot(
                keyStart: UInt32(keyStart), valueStart: UInt32(valueStart), valueLength: UInt32(valueLength),
                keyLength: UInt16(keyLength), keyOffset: UInt8(keyStart - start))
            mirror.withUnsafeBytes { bytes in _ = index.update(slot, in: bytes) }
        }
    }

    /// Removes `key`; an absent key is not an error.
    func remove(_ key: String) throws(MappedKVError) {
        try Self.validate(key: key)
        try writing { (files) throws(MappedKVError) in
            let removed = mirror.withUnsafeBytes { bytes in Self.withBytes(of: key) { index.remove($0, in: bytes) } }
            guard removed != nil else { return }
            let keyLength = key.utf8.count
            let recordLength = Record.encodedSize(keyLength: keyLength, valueLength: 0)
            if recordLength < spaceLeft(files) {
                let start = mirror.count
                Self.withBytes(of: key) { Record.appendDeletion(key: $0, to: &mirror) }
                commitAppend(files, from: start)
            } else if index.isEmpty {
                try clearAll()
            } else {
                // The compaction drops the key, so no deletion record is needed.
                try writeBack(files, incomingLength: 0, needSync: true)
            }
        }
    }

    /// Empties the store: the file returns to its expected capacity and the sequence increments.
    func clearAll() throws(MappedKVError) {
        try writing { (files) throws(MappedKVError) in
            guard !(files.dataFileSize == expectedCapacity && mirror.isEmpty && index.isEmpty && !needsRandomIV) else {
                return
            }
            let newCipher = freshCipher()
            var newMeta = meta
            _ = newMeta.update(actualSize: 0, crc: 0, iv: newCipher?.iv, increasesSequence: true)
            // Unlike MMKV, the old records do not stay readable in the first page: the commit zeroes them.
            try commit(
                files,
                WriteBackJournal(
                    base: files.metaStamp(), fileSize: UInt64(expectedCapacity), meta: newMeta, region: []),
                staleEnd: mirror.count, sync: true)
            meta = newMeta
            if let newCipher { cipher = newCipher.stream }
            mirror = []
            index.removeAll()
            recordCount = 0
            logger.debug("cleared store", metadata: ["id": "\(location.id)", "sequence": "\(meta.sequence)"])
        }
    }

    /// Compacts the store and shrinks its file while it is more than twice the size it needs.
    func trim() throws(MappedKVError) {
        try writing { (files) throws(MappedKVError) in
            if mirror.isEmpty || index.isEmpty { return try clearAll() }
            guard files.dataFileSize > expectedCapacity else { return }
            let currentSize = files.dataFileSize
            let minimum = expectedCapacity
            try rewrite(files, needSync: true) { length in
                FileSizePolicy.sizeAfterTrim(fileSize: currentSize, actualSize: length, minimum: minimum)
            }
        }
    }

    /// Re-encrypts the store under `newKey` (nil: decrypts it to plain text) with a full write-back:
    /// a fresh IV and an incremented sequence. On failure before anything is written, the old key stays.
    func rekey(to newKey: CryptKey?) throws(MappedKVError) {
        try writing { (files) throws(MappedKVError) in try rekey(files, to: newKey) }
    }

    private func rekey(_ files: StoreFiles, to newKey: CryptKey?) throws(MappedKVError) {
        let oldKey = cryptKey
        let oldCipher = cipher
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
        try writing { (files) throws(MappedKVError) in
            try configureExpiry(files, enabled: enabled, defaultDuration: defaultDuration)
        }
    }

    private func configureExpiry(_ files: StoreFiles, enabled: Bool, defaultDuration: UInt32) throws(MappedKVError) {
        defer { if expiryEnabled { defaultExpiryDuration = defaultDuration } }
        guard enabled != expiryEnabled else { return }
        var flags = meta.flags
        if enabled { flags.insert(.keyExpiry) } else { flags.remove(.keyExpiry) }
        if files.dataFileSize == expectedCapacity && mirror.isEmpty {
            var newMeta = meta
            _ = newMeta.update(actualSize: 0, crc: 0, increasesSequence: true)
            newMeta.flags = flags
            newMeta.version = .flag
            try commit(
                files,
                WriteBackJournal(
                    base: files.metaStamp(), fileSize: UInt64(files.dataFileSize), meta: newMeta, region: []),
                staleEnd: 0, sync: true)
            meta = newMeta
            expiryEnabled = enabled
        } else {
            let currentSize = files.dataFileSize
            let liveCount = index.count
            let page = pageSize
            let transform: ValueTransform =
                enabled
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
        index = KeyIndex()
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
            let stored = files.writeRegion(
                UnsafeRawBufferPointer(rebasing: bytes[start...]), at: start, encryptingWith: cipher)
            let crc = CRC32.update(meta.crcDigest, stored)
            if meta.version >= .flag {
                // The common case: two 4-byte stores, without copying the meta struct.
                meta.crcDigest = crc
                meta.actualSize = UInt32(bytes.count)
                files.writeCRCAndSize(crc: crc, actualSize: UInt32(bytes.count))
            } else {
                let write = meta.update(actualSize: UInt32(bytes.count), crc: crc, increasesSequence: false)
                files.writeMeta(meta, write)
            }
        }
        recordCount += 1
        observed = files.metaStamp()
    }

    /// Carries out a whole-file change crash-safely (see ``WriteBackJournal``): the journal, any
    /// growth, the marker sequence, then the in-place rewrite and the new meta, then the journal's
    /// removal. A failure before the marker changes nothing; after it, the store closes and the
    /// next load (in any process) finishes the write-back from the journal.
    private func commit(
        _ files: StoreFiles, _ journal: WriteBackJournal, staleEnd: Int, sync: Bool
    ) throws(MappedKVError) {
        try files.writeJournal(journal, sync: sync)
        do {
            if journal.fileSize > UInt64(files.dataFileSize) { try files.resizeData(to: Int(journal.fileSize)) }
        } catch {
            try? files.removeJournal()
            throw error
        }
        do {
            files.writeSequence(journal.markerSequence)
            if sync { try files.synchronizeMeta() }
            try files.applyWriteBack(journal, staleEnd: staleEnd, sync: sync)
        } catch {
            throw poison(error)
        }
        do { try files.removeJournal() } catch {
            // Harmless: the sequence has moved past the marker, so the next load ignores it.
            logger.warning(
                "could not remove the write-back journal", metadata: ["id": "\(location.id)", "error": "\(error)"])
        }
        observed = files.metaStamp()
    }

    /// Makes room for a record of `incomingLength` bytes that does not fit. A region that holds
    /// dead records (or values that may have expired) is compacted by a full write-back, as MMKV
    /// does. A region of live records only would be rewritten byte for byte, so instead the file
    /// just grows by MMKV's doubling rule and the sequence increments (other processes remap);
    /// the records stay where they are and nothing but the file size changes on disk.
    private func makeRoom(_ files: StoreFiles, incomingLength: Int) throws(MappedKVError) {
        guard !expiryEnabled, holderLength + index.recordBytes == mirror.count else {
            return try writeBack(files, incomingLength: incomingLength, needSync: true)
        }
        guard
            let newSize = FileSizePolicy.sizeForWriteBack(
                fileSize: files.dataFileSize, liveLength: mirror.count, incomingLength: incomingLength,
                liveCount: index.count, needSync: true, pageSize: pageSize)
        else {
            throw .storeFull("the data region would exceed \(RecordLimits.maximumRegionLength) bytes")
        }
        try files.resizeData(to: newSize)
        if meta.version >= .sequence {
            meta.sequence &+= 1
            files.writeSequence(meta.sequence)
        }
        observed = files.metaStamp()
        mirror = mirror.withUnsafeBytes { MirrorBuffer.make(copying: $0, capacity: newSize - 4) }
        logger.debug(
            "grew the data file",
            metadata: ["id": "\(location.id)", "fileSize": "\(newSize)", "sequence": "\(meta.sequence)"])
    }

    /// The length of the item-size holder varint that starts a non-empty region.
    private var holderLength: Int {
        mirror.withUnsafeBytes { bytes in
            var cursor = ByteCursor(bytes)
            return (try? cursor.readVarint64()) == nil ? 0 : cursor.position
        }
    }

    /// Removes the keys whose values have expired from the index (their records are then dead).
    private func dropExpiredKeys() {
        let now = configuration.clock.now()
        var expired: [ValueSlot] = []
        index.forEachSlot { slot in if liveValueRange(slot, now: now) == nil { expired.append(slot) } }
        guard !expired.isEmpty else { return }
        mirror.withUnsafeBytes { bytes in
            for slot in expired { index.remove(keyOf: slot, in: bytes) }
        }
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
        staleEnd: Int? = nil, chooseFileSize: (Int) -> Int?
    ) throws(MappedKVError) {
        if expiryEnabled { dropExpiredKeys() }  // as MMKV's filterExpiredKeys does
        let holder = ItemSizeHolder.random()
        let fresh: [UInt8]
        let newFileSize: Int
        var plan: CompactionPlan?
        var rebuilt: KeyIndex?
        if transform == nil, let compaction = mirror.withUnsafeBytes({ CompactionPlan(region: $0, slots: index) }) {
            // Copy the runs of live records, in file order, into a mirror sized for the new file.
            let length = holder.count + compaction.liveLength
            guard let size = chooseFileSize(length) else {
                throw .storeFull("the data region would exceed \(RecordLimits.maximumRegionLength) bytes")
            }
            fresh = mirror.withUnsafeBytes { old in
                MirrorBuffer.make(capacity: max(length, size - 4)) { base in
                    holder.withUnsafeBytes { base.copyMemory(from: $0.baseAddress!, byteCount: holder.count) }
                    var written = holder.count
                    for run in compaction.runs {
                        (base + written).copyMemory(from: old.baseAddress! + run.start, byteCount: run.length)
                        written += run.length
                    }
                    return written
                }
            }
            newFileSize = size
            plan = compaction
        } else {
            var copy = holder
            var newIndex = KeyIndex(minimumCapacity: index.count, hasher: index.hasher)
            mirror.withUnsafeBytes { old in
                for slot in index.slots.sorted(by: { $0.keyStart < $1.keyStart }) {
                    let start = copy.count
                    let key = UnsafeRawBufferPointer(rebasing: old[slot.keyRange])
                    var value = Array(old[slot.valueRange])
                    switch transform {
                    case .addExpiry(let time): ExpirySuffix.append(time, to: &value)
                    case .removeExpiry: if value.count > ExpirySuffix.length { value.removeLast(ExpirySuffix.length) }
                    case nil: break
                    }
                    value.withUnsafeBytes { Record.append(key: key, value: $0, to: &copy) }
                    let keyStart = start + Varint.size(of: UInt64(key.count))
                    let valueStart = copy.count - value.count
                    var newSlot = ValueSlot(
                        keyStart: UInt32(keyStart), valueStart: UInt32(valueStart), valueLength: UInt32(value.count),
                        keyLength: slot.keyLength, keyOffset: UInt8(keyStart - start))
                    newSlot.keyIsRepaired = slot.keyIsRepaired
                    newIndex.insertNew(newSlot, hash: newIndex.hash(of: slot, in: old))
                }
            }
            guard let size = chooseFileSize(copy.count) else {
                throw .storeFull("the data region would exceed \(RecordLimits.maximumRegionLength) bytes")
            }
            fresh = copy.withUnsafeBytes { MirrorBuffer.make(copying: $0, capacity: size - 4) }
            newFileSize = size
            rebuilt = newIndex
        }
        // An encrypted region is one stream from a fresh IV at position 0.
        let newCipher = freshCipher()
        var stored = fresh  // shares the storage unless it is encrypted
        if let newCipher { stored.withUnsafeMutableBytes { newCipher.stream.encrypt($0) } }
        let crc = stored.withUnsafeBytes { CRC32.update(0, $0) }
        var newMeta = meta
        _ = newMeta.update(actualSize: UInt32(fresh.count), crc: crc, iv: newCipher?.iv, increasesSequence: true)
        if let flags {
            newMeta.flags = flags
            newMeta.version = .flag
        }
        // Old records past the new end would stay readable (in plain text, after encrypting a
        // plain store); MMKV leaves them, the commit erases them.
        try commit(
            files,
            WriteBackJournal(base: files.metaStamp(), fileSize: UInt64(newFileSize), meta: newMeta, region: stored),
            staleEnd: staleEnd ?? mirror.count, sync: needSync)
        meta = newMeta
        mirror = fresh
        if let plan {
            let holderLength = holder.count
            index.relocateSlots { slot in
                slot.moved(by: holderLength + plan.newStart(ofRecordAt: slot.recordStart) - slot.recordStart)
            }
        } else if let rebuilt {
            index = rebuilt
        }
        if let newCipher { cipher = newCipher.stream }
        if let flags { expiryEnabled = flags.contains(.keyExpiry) }
        recordCount = index.count
        logger.debug(
            "full write-back",
            metadata: [
                "id": "\(location.id)", "keys": "\(index.count)", "actualSize": "\(fresh.count)",
                "fileSize": "\(files.dataFileSize)", "sequence": "\(meta.sequence)",
            ])
    }
}
