import MappedKVCrypto
import MappedKVFormat
import MappedKVIO

// Locks, and catching up with other processes' writes.
//
// In multi-process mode every read first compares the meta stamp in the shared mapping with the
// one last seen (no system call); only when it differs does it take the shared `flock` and reload
// what changed. Every write takes the exclusive `flock`, catches up, writes, and releases it. The
// invariant: no state is read or written under a stamp other than ``StoreCore/observed`` without
// first catching up (docs/FORMAT.md section 6).
extension StoreCore {
    /// Takes the inter-process lock; true if another process may have written since.
    func takeLock(_ files: StoreFiles, _ kind: LockKind) throws(MappedKVError) -> Bool {
        try systemCall { () throws(SystemError) in try files.lock.lock(kind) }
    }

    /// Releases one level of the inter-process lock. A failure closes the store, which releases it.
    func releaseLock(_ kind: LockKind) {
        guard let files = lifecycle.files else { return }
        do { try files.lock.unlock(kind) } catch { _ = poison(.system(SystemCallError(error))) }
    }

    /// Makes the in-memory state current before a read. In the steady state this is three loads
    /// from the meta mapping and no system call.
    @inline(__always)
    func prepareRead() throws(MappedKVError) {
        guard let files = lifecycle.files else {
            throw .closed(lifecycle.closedReason ?? "store '\(location.id)' was closed")
        }
        if mappedReads.isActive { try leaveMappedReadsUnderSharedLock(files) }
        if isMemoryReleased { return try reloadReleasedMemory(files) }
        guard isMultiProcess, files.metaStamp() != observed else { return }
        try catchUpUnderSharedLock(files)
    }

    @inline(never)
    private func catchUpUnderSharedLock(_ files: StoreFiles) throws(MappedKVError) {
        _ = try takeLock(files, .shared)
        defer { releaseLock(.shared) }
        try catchUp(files)
    }

    /// Runs a write under the exclusive lock, after catching up with other processes' writes. For
    /// an append of at most `maxLength` bytes (a set or a remove) the catch-up, and its `fstat`, is
    /// skipped when ``appendNeedsNoCatchUp(_:maxLength:)`` proves it unnecessary.
    func writing<R>(
        appendingAtMost maxLength: Int? = nil, _ body: (StoreFiles) throws(MappedKVError) -> R
    ) throws(MappedKVError) -> R {
        let files = try writableFiles()
        if isMemoryReleased { try reloadReleasedMemory(files) }
        guard isMultiProcess else {
            if mappedReads.isActive { try leaveMappedReads(files) }
            let result = try body(files)
            if flushesEveryWrite { try flushEveryWrite(files) }
            return result
        }
        let changed = try takeLock(files, .exclusive)
        defer { releaseLock(.exclusive) }
        if mappedReads.isActive {
            try leaveMappedReads(files)
        } else if changed, !(maxLength.map { appendNeedsNoCatchUp(files, maxLength: $0) } ?? false) {
            try catchUp(files)
        }
        let result = try body(files)
        if flushesEveryWrite { try flushEveryWrite(files) }
        // Another process's next read finds the rewritten region described by the index file,
        // which it maps or reads instead of decoding the log (FORMAT.md 12.4).
        if tracking.rewroteRegion {
            tracking.rewroteRegion = false
            writeIndexFileIfStale(files)
        }
        return result
    }

    /// Whether an append of at most `maxLength` bytes may skip the catch-up (docs/FORMAT.md 6.3):
    /// the meta stamp is the one this instance last saw, so no process appended, compacted, grew,
    /// cleared or shrank the store in any way that moves it; the append needs no write-back first;
    /// and it ends before the end of the page in which the region ends now. The one change that
    /// leaves the stamp alone, an MMKV `trim` that shrinks the file without a sequence increment
    /// (2.10), truncates to more than the region, rounded up to whole pages, so it keeps that page:
    /// the append cannot fault, and a later one past the page catches up and remaps.
    private func appendNeedsNoCatchUp(_ files: StoreFiles, maxLength: Int) -> Bool {
        guard files.metaStamp() == observed, !loaded.index.isEmpty, !needsRandomIV, loaded.meta.version >= .flag else {
            return false
        }
        let end = 4 + loaded.mirror.count
        return end + maxLength < (end / pageSize + 1) * pageSize
    }

    /// Takes the exclusive inter-process lock for an exclusive section and catches up with the
    /// files; with `blocking` false, returns false at once if another process holds the lock.
    /// Every true must be matched by one ``endExclusiveSection()``.
    func beginExclusiveSection(blocking: Bool) throws(MappedKVError) -> Bool {
        let files = try openFiles()
        guard isMultiProcess else {
            try leaveMappedReads(files)
            return true
        }
        let changed: Bool
        if blocking {
            changed = try takeLock(files, .exclusive)
        } else {
            let attempt = try systemCall { () throws(SystemError) in try files.lock.tryLockExclusive() }
            guard let attempt else { return false }
            changed = attempt
        }
        do throws(MappedKVError) {
            if mappedReads.isActive {
                try leaveMappedReads(files)
            } else if changed {
                try catchUp(files)
            }
        } catch {
            releaseLock(.exclusive)
            throw error
        }
        return true
    }

    /// Releases the lock an exclusive section took.
    func endExclusiveSection() {
        if isMultiProcess { releaseLock(.exclusive) }
    }

    /// Looks for other processes' changes now (MMKV's `checkContentChanged`); true if one was found.
    func checkForChanges() throws(MappedKVError) -> Bool {
        let files = try openFiles()
        guard isMultiProcess else { return false }
        let before = tracking.pendingChanges.count
        _ = try takeLock(files, .shared)
        defer { releaseLock(.shared) }
        if mappedReads.isActive { try catchUpMapped(files) } else { try catchUp(files) }
        return tracking.pendingChanges.count > before
    }

    /// The changes noticed since the last call.
    func takePendingChanges() -> [ExternalChange] {
        signal.pending.store(false, ordering: .sequentiallyConsistent)
        defer { tracking.pendingChanges = [] }
        return tracking.pendingChanges
    }

    /// Brings the state up to date with the files, under a lock already held (docs/FORMAT.md 6.3):
    /// nothing changed, an append (decode just the tail), or anything else (full reload).
    private func catchUp(_ files: StoreFiles) throws(MappedKVError) {
        let stamp = files.metaStamp()
        let fileSize = try files.currentDataFileSize()
        guard stamp != observed || fileSize != files.dataFileSize else { return }
        // The stamp caught up to is published after the signal below is raised, so that a read that
        // checks the published stamp without the mutex and finds it current also finds the signal
        // (Store/ObservedStamp.swift).
        tracking.publishesObserved = false
        defer {
            tracking.publishesObserved = true
            publishObserved()
        }
        let change: ExternalChange.Kind
        var records: [ExternalChange.Record]?  // nil: everything may have changed
        if stamp.sequence == observed.sequence, fileSize == files.dataFileSize, let tail = loadTail(files, stamp) {
            change = .appended(records: tail.records)
            records = tail.changed
        } else {
            try reload(files, key: cryptKey, policy: .consult(configuration.recoveryHandler))
            change = .reloaded
        }
        metrics?.countCatchUp(change)
        logger.trace("caught up with another process", metadata: ["id": "\(location.id)", "change": "\(change)"])
        tracking.pendingChanges.append(
            ExternalChange(storeID: location.id, kind: change, sequence: loaded.meta.sequence, records: records))
        signal.pending.store(true, ordering: .sequentiallyConsistent)
    }

    /// Decodes just the records another process appended, if the new bytes extend the old CRC to
    /// the stored one; returns how many and, if anyone subscribes to changes, their keys in order
    /// (else nil: unknown); nil when a full reload is needed instead.
    private func loadTail(_ files: StoreFiles, _ stamp: MetaStamp) -> (records: Int, changed: [ExternalChange.Record]?)?
    {
        let oldLength = loaded.mirror.count
        let newLength = Int(stamp.actualSize)
        guard loaded.meta.holdsActualSize, newLength > oldLength, 4 + newLength <= files.dataFileSize else {
            return nil
        }
        let tail = UnsafeRawBufferPointer(rebasing: files.dataFileBytes[(4 + oldLength)..<(4 + newLength)])
        guard CRC32.update(loaded.meta.crcDigest, tail) == stamp.crcDigest else { return nil }
        let stream = loaded.cipher?.copy()
        loaded.mirror.append(contentsOf: tail)
        // A decryption failure leaves the stream unusable: the full reload starts a new one (and
        // reports the failure if it recurs).
        if let stream {
            do throws(CryptoFailure) { try stream.decrypt(&loaded.mirror, from: oldLength) } catch { return nil }
        }
        let (summary, _) = loaded.index.decodeRecords(of: loaded.mirror, from: oldLength)
        guard summary.error == nil else { return nil }  // the full reload rebuilds mirror and index
        if let stream { loaded.cipher = stream }
        loaded.meta.crcDigest = stamp.crcDigest
        loaded.meta.actualSize = stamp.actualSize
        loaded.recordCount += summary.recordCount
        observed = stamp
        let changed =
            signal.isObserved.load(ordering: .relaxed) ? Self.records(ofRecordsIn: loaded.mirror, from: oldLength) : nil
        return (summary.recordCount, changed)
    }

    /// Reloads everything from the files with `key`, upgrading to the exclusive lock if an
    /// interrupted write must be repaired or damage handled first.
    ///
    /// With `allowsMapped`, the store reads through its mappings instead if it may
    /// (StoreCore+MappedReads.swift); the callers that go on to use the private state pass false.
    func reload(
        _ files: StoreFiles, key: CryptKey?, policy: StoreLoader.DamagePolicy, allowsMapped: Bool = false
    ) throws(MappedKVError) {
        if allowsMapped, !isMemoryReleased, enterMappedReads(files) { return }
        let access: StoreLoader.Access =
            configuration.isReadOnly
            ? .readOnly : (!isMultiProcess || files.lock.exclusiveCount > 0 ? .exclusive : .shared)
        switch try StoreLoader.load(
            files, key: key, treatsStoreAsPlain: configuration.treatsStoreAsPlain, access: access, policy: policy,
            indexFile: indexFilePath, logger: logger)
        {
        case .loaded(let state):
            try adopt(state, files)
        case .needsExclusiveLock:
            _ = try takeLock(files, .exclusive)
            defer { releaseLock(.exclusive) }
            let outcome = try StoreLoader.load(
                files, key: key, treatsStoreAsPlain: configuration.treatsStoreAsPlain, access: .exclusive,
                policy: policy, indexFile: indexFilePath, logger: logger)
            guard case .loaded(let state) = outcome else {
                throw .corrupted(id: location.id, reason: .interruptedWriteBack)
            }
            try adopt(state, files)
        }
    }

    /// Reloads the store with `key` without rewriting anything (MMKV's `checkReSetCryptKey`).
    /// If the files do not decode with it, this throws and nothing changes.
    func adoptCryptKey(_ key: CryptKey?) throws(MappedKVError) {
        let files = try openFiles()
        if isMultiProcess { _ = try takeLock(files, .shared) }
        defer { if isMultiProcess { releaseLock(.shared) } }
        try reload(files, key: key, policy: .fail)
        cryptKey = key
    }
}
