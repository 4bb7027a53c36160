import Logging
import MappedKVCrypto
import MappedKVFormat
import MappedKVIO

/// Reads a store's files into a fresh state: the one loader behind an open, a reload after
/// another process's change, and a recovery.
///
/// It finishes interrupted writes without loss and hands damage to the caller's policy; it never
/// calls back into ``StoreCore``, which only adopts what it returns. The byte-level rules it
/// applies are in docs/FORMAT.md, sections 7 (loading and recovery) and 8 (the write-back journal).
enum StoreLoader {
    /// Everything a load reads from the files.
    struct LoadedState {
        /// The region as loaded (or as recovered).
        var region: SoundRegion
        var stamp: MetaStamp
        /// What was done about damage, if any was found.
        var recovery: RecoveryReport?
        /// The writes a crash lost, if the files show that.
        var crashLoss: CrashLossReport?
        /// The state is a recovery that the files do not hold yet: a full write-back must follow.
        var needsRewrite = false
        /// Whether the index came from the index file or from decoding the log.
        var indexOutcome = IndexedLoad.Outcome.decoded
    }

    /// What a load may do about an interrupted write.
    enum Access {
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
    enum Outcome {
        /// The files were read.
        case loaded(LoadedState)
        /// An interrupted write must be repaired, or damage handled, which needs the exclusive lock.
        case needsExclusiveLock
    }

    /// Reads the files into a fresh state, remapping them at their current sizes first.
    ///
    /// Interrupted writes are repaired without loss (with ``Access/exclusive``; in memory
    /// only when read-only): a write-back that left its journal is finished from it, and a meta
    /// whose CRC covers more than its size is completed (see ``LoadAssessment``). Damage goes to
    /// `policy`: `.fail` throws and changes nothing; `.recover` and `.discard` copy both files
    /// aside (when writable) and return a state that the caller must write back
    /// (``LoadedState/needsRewrite``). Without a key, damage to a store whose meta holds an IV
    /// throws ``MappedKVError/missingCryptKey(id:)`` first, unless `treatsStoreAsPlain`
    /// (``MissingCryptKey``).
    ///
    /// With `indexFile`, the index file at that path is tried first, once any interrupted
    /// write-back is finished (``IndexedLoad``).
    static func load(
        _ files: StoreFiles, key: CryptKey?, treatsStoreAsPlain: Bool = false, access: Access, policy: DamagePolicy,
        indexFile: String? = nil, logger: Logger
    ) throws(MappedKVError) -> Outcome {
        let id = files.location.id
        try files.refreshMappings()
        if case .some(let journal) = try files.readJournal() {
            switch journalAction(journal, files: files) {
            case .ignore:
                if access != .readOnly { try files.removeJournal() }
            case .redo(let journal):
                switch access {
                case .readOnly: throw .corrupted(id: id, reason: .interruptedWriteBack)
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
        if let indexFile, let (state, outcome) = IndexedLoad.load(files, key: key, path: indexFile, logger: logger) {
            var state = state
            state.indexOutcome = outcome
            return .loaded(state)
        }
        let assessment = try cryptoCall { () throws(CryptoFailure) in
            try LoadAssessment.assess(dataFile: files.dataFileBytes, metaFile: files.metaFileBytes, key: key)
        }
        switch assessment {
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
        case .crashLoss(let finding):
            // Kept records read without a key from a store with an IV could be ciphertext.
            if key == nil, !treatsStoreAsPlain, !finding.kept.plain.isEmpty,
                MissingCryptKey.metaHoldsIV(finding.kept.meta)
            {
                throw .missingCryptKey(id: id)
            }
            if access == .shared { return .needsExclusiveLock }
            let report = finding.report(storeID: id, isReadOnly: access == .readOnly)
            logger.warning("writes lost to a crash", metadata: ["id": "\(id)", "loss": "\(report)"])
            return .loaded(
                LoadedState(
                    region: finding.kept, stamp: files.metaStamp(), crashLoss: report,
                    needsRewrite: access == .exclusive))
        case .damaged(let finding):
            try MissingCryptKey.check(finding, key: key, treatsStoreAsPlain: treatsStoreAsPlain, id: id)
            if access == .shared { return .needsExclusiveLock }
            return .loaded(
                try recover(finding, files: files, key: key, access: access, policy: policy, logger: logger))
        }
    }

    /// Puts damage to `policy`: throws for `.fail`; otherwise copies the files aside (when
    /// writable) and returns the kept or blank state, which a writer must write back.
    private static func recover(
        _ finding: DamageFinding, files: StoreFiles, key: CryptKey?, access: Access, policy: DamagePolicy,
        logger: Logger
    ) throws(MappedKVError) -> LoadedState {
        let id = files.location.id
        let event = finding.event(storeID: id, isReadOnly: access == .readOnly)
        logger.error("store damaged", metadata: ["id": "\(id)", "damage": "\(event)"])
        let decision: RecoveryDecision
        switch policy {
        case .fail: decision = .fail
        case .consult(let handler): decision = handler?(event) ?? .default(for: event)
        }
        guard decision != .fail else {
            // With a key, records that do not decode mean the key is wrong. Without one, a first record
            // that does not decode may be an encrypted store or a damaged plain one: damage, whose
            // reason names both.
            if finding.kind == .wrongKeySuspected && key != nil {
                throw .wrongCryptKey(id: id, reason: finding.reason)
            }
            throw .corrupted(id: id, reason: finding.reason)
        }
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
        return LoadedState(
            region: region, stamp: files.metaStamp(), recovery: report, needsRewrite: access == .exclusive)
    }

    /// What to do with a write-back journal found at load.
    enum JournalAction {
        /// It never took effect (torn, or the marker is absent) or was completed and appended
        /// to since: delete it.
        case ignore
        /// The write-back may be incomplete: finish it (doing it again is harmless).
        case redo(WriteBackJournal)
    }

    /// Decides from the meta whether a journal's write-back may be incomplete.
    ///
    /// From the marker (step 3) to the end of the final meta's store (step 7) the writer changes
    /// the meta's CRC and size only by storing the new ones over the old, so an interrupted
    /// write-back leaves each of their bytes equal to the old value's or the new value's byte at
    /// that place (a store cut short mixes the two; docs/FORMAT.md 8.4). Then it is redone.
    /// Anything else means the region was appended to after the meta reached the marker
    /// sequence: the write-back completed and its journal could not be deleted (every byte of the
    /// struct but the CRC and size is the new meta's), or the journal is stale, left by a process
    /// killed before it stored the marker, and the sequence reached the marker later through
    /// another change (a growth's increment, another writer's). Redoing it would roll the store
    /// back to the journal's copy and lose every write since, so it is ignored.
    static func journalAction(_ journal: WriteBackJournal?, files: StoreFiles) -> JournalAction {
        guard let journal else { return .ignore }
        let stamp = files.metaStamp()
        guard stamp.sequence == journal.markerSequence else { return .ignore }
        let final = journal.meta
        let completed = completedThenAppended(stored: files.metaFileBytes, final: final.serialized)
        if completed, stamp.crcDigest != final.crcDigest || stamp.actualSize != final.actualSize { return .ignore }
        guard bytewiseMix(stamp.crcDigest, of: journal.base.crcDigest, final.crcDigest),
            bytewiseMix(stamp.actualSize, of: journal.base.actualSize, final.actualSize)
        else { return .ignore }
        return .redo(journal)
    }

    /// Whether the stored meta struct equals `final` in every byte but the CRC and the size.
    private static func completedThenAppended(stored: UnsafeRawBufferPointer, final: [UInt8]) -> Bool {
        guard stored.count >= MetaInfo.size else { return false }
        let appendFields = [
            MetaInfo.Offset.crcDigest..<(MetaInfo.Offset.crcDigest + 4),
            MetaInfo.Offset.actualSize..<(MetaInfo.Offset.actualSize + 4),
        ]
        for offset in 0..<MetaInfo.size where !appendFields.contains(where: { $0.contains(offset) }) {
            if stored[offset] != final[offset] { return false }
        }
        return true
    }

    /// Whether each byte of `value` is the byte of `old` or of `new` at the same place: what a
    /// store of `new` over `old` leaves, whole or cut short.
    private static func bytewiseMix(_ value: UInt32, of old: UInt32, _ new: UInt32) -> Bool {
        (0..<4).allSatisfy { byte in
            let shift = UInt32(byte * 8)
            let part = (value >> shift) & 0xFF
            return part == (old >> shift) & 0xFF || part == (new >> shift) & 0xFF
        }
    }
}
