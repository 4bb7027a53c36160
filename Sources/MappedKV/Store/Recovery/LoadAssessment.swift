import MappedKVCrypto
import MappedKVFormat

/// A data region that loads: its plain text, index and meta.
struct SoundRegion {
    /// The meta to load with: the stored one normalized, with a repaired size if ``repair`` is set.
    var meta: MetaInfo
    /// The data file's 4-byte header.
    var header: UInt32
    /// The plain text of the region.
    var plain: [UInt8]
    /// The live keys.
    var index: KeyIndex
    /// Records decoded, deletions included.
    var recordCount: Int
    /// The cipher stream positioned at the end of the region, for an encrypted store.
    var cipher: CFBStream?
    /// A lossless repair of the meta's CRC and size that a writer should store.
    var repair: LosslessRepair?

    /// Whether every value carries MMKV's expiry suffix (meta flag bit 0, from version 4).
    var expiryEnabled: Bool { meta.version >= .flag && meta.flags.contains(.keyExpiry) }
}

/// A repair of the meta that loses nothing: the files hold exactly a state the meta recorded.
enum LosslessRepair: Equatable {
    /// The header holds the size the meta's CRC covers (a store downgraded to a pre-2.4 MMKV and
    /// upgraded again; docs/FORMAT.md 7.3a).
    case headerSize
    /// A process died between storing an append's CRC and its size: the size is advanced to the
    /// record boundary whose running CRC equals the stored one.
    case interruptedAppend
    /// The meta's CRC does not match its size, but a checkpoint (docs/FORMAT.md 3.5) of exactly
    /// that size does: the region is the state it recorded, and only the meta's CRC is restored.
    case checkpoint
}

/// Damage a load found, with the verified state a recovery would load.
struct DamageFinding {
    /// What was found and what recovering would keep and drop.
    var kind: DamageKind
    var reason: CorruptionReason
    var proposal: RecoveryProposal
    /// The state a recovery keeps: the proposal's prefix, decoded.
    var kept: SoundRegion

    /// The event for the recovery handler.
    func event(storeID: String, isReadOnly: Bool) -> DamageEvent {
        DamageEvent(storeID: storeID, kind: kind, reason: reason, proposal: proposal, isReadOnly: isReadOnly)
    }
}

/// What a load makes of a store's files.
enum LoadAssessment {
    /// The region loads (perhaps after a lossless repair of the meta).
    case sound(SoundRegion)
    /// The region is damaged; the finding says what recovery would keep.
    case damaged(DamageFinding)
    /// A crash lost the newest writes: the files hold a verified prefix that includes the last
    /// durability point. Not damage; a writer rewrites the kept state without copying anything aside.
    case crashLoss(CrashLossFinding)

    /// Assesses `dataFile` (the whole file, header included) against `storedMeta`, in MMKV's
    /// order (docs/FORMAT.md section 7) and then further:
    /// 1. sizes in range and the region's CRC equal to the meta's: a strict load;
    /// 2. the header's size, if the meta's CRC covers exactly that (MMKV's downgrade-and-upgrade case);
    /// 3. a record boundary past the recorded size whose running CRC equals the meta's: an append
    ///    interrupted between its two meta stores, completed losslessly;
    /// 4. the longest prefix something vouches for (a boundary with the meta's CRC, the last
    ///    confirmed write-back, a checkpoint of docs/FORMAT.md 3.5): writes lost to a crash when
    ///    it includes the last durability point, otherwise damage with that prefix as the proposal.
    ///
    /// A CRC-valid region that does not decode is damage too, never an empty store.
    /// Pure: reads the bytes it is given and nothing else. Throws only when libcrypto fails to
    /// decrypt, which says nothing about the files.
    static func assess(
        dataFile: UnsafeRawBufferPointer, metaFile: UnsafeRawBufferPointer, key: CryptKey?
    ) throws(CryptoFailure) -> LoadAssessment {
        let assessment = try assess(
            dataFile: dataFile, storedMeta: parseMeta(metaFile), key: key,
            checkpoints: DurabilityCheckpoints.read(metaFile))
        // A meta file cut short of the struct (an empty one is a new store's) is damage even when
        // the bytes that remain describe the data: report it, proposing what they vouch for.
        guard metaFile.count > 0, metaFile.count < MetaInfo.size, case .sound(let region) = assessment else {
            return assessment
        }
        var kept = region
        kept.repair = nil
        let proposal = RecoveryProposal(
            basis: .currentCRC, keptBytes: region.plain.count, keptRecords: region.recordCount,
            keptKeys: region.index.count, droppedBytes: 0, droppedRecords: 0, droppedKeys: [])
        let reason = CorruptionReason.metaUnreadable(
            "the meta file is \(metaFile.count) bytes, shorter than the \(MetaInfo.size)-byte meta struct")
        return .damaged(DamageFinding(kind: .metaMissing, reason: reason, proposal: proposal, kept: kept))
    }

    /// The meta struct in `metaFile`; bytes missing from a short file read as zeros.
    static func parseMeta(_ metaFile: UnsafeRawBufferPointer) -> MetaInfo {
        if metaFile.count >= MetaInfo.size, let info = try? MetaInfo(parsing: metaFile) { return info }
        var padded = [UInt8](repeating: 0, count: MetaInfo.size)
        padded.withUnsafeMutableBytes {
            $0.copyMemory(from: UnsafeRawBufferPointer(rebasing: metaFile.prefix(MetaInfo.size)))
        }
        return (try? MetaInfo(parsing: padded)) ?? MetaInfo()
    }

    /// Assesses the data file against an already parsed meta.
    static func assess(
        dataFile: UnsafeRawBufferPointer, storedMeta: MetaInfo, key: CryptKey?,
        checkpoints: DurabilityCheckpoints.Contents? = nil
    ) throws(CryptoFailure) -> LoadAssessment {
        let meta = storedMeta.normalized
        let header = RegionValidator.header(of: dataFile)
        let fileSize = dataFile.count
        let capacity = max(0, fileSize - 4)
        let stored =
            fileSize > 4
            ? UnsafeRawBufferPointer(rebasing: dataFile[4...]) : UnsafeRawBufferPointer(start: nil, count: 0)
        let empty = SoundRegion(
            meta: meta, header: header, plain: [], index: KeyIndex(), recordCount: 0,
            cipher: try key.map { (key) throws(CryptoFailure) in try meta.regionStream(for: key) }, repair: nil)

        if RegionValidator.isBlankMetaOverData(meta: meta, dataFile: dataFile) {
            // A store made durable empty whose first write reached the data but not the meta.
            if checkpoints != nil,
                let loss = try crashLoss(
                    stored: stored, meta: meta, header: header, key: key,
                    scan: RegionScan(stored: stored, meta: meta, key: key), checkpoints: checkpoints)
            {
                return .crashLoss(loss)
            }
            let proposal = RecoveryProposal(
                basis: .nothing, keptBytes: 0, keptRecords: 0, keptKeys: 0,
                droppedBytes: capacity, droppedRecords: 0, droppedKeys: [])
            return .damaged(
                DamageFinding(kind: .metaMissing, reason: .metaFileMissing, proposal: proposal, kept: blank(empty)))
        }
        let size = RegionValidator.actualSize(meta: meta, header: header)
        if fileSize == 0 && size == 0 { return .sound(empty) }

        func fits(_ length: Int) -> Bool { length < fileSize && length + 4 <= fileSize }
        func crc(_ length: Int) -> UInt32 { CRC32.update(0, UnsafeRawBufferPointer(rebasing: stored[0..<length])) }

        let lengthIsValid = fits(size)
        var computed: UInt32 = 0
        if lengthIsValid {
            computed = crc(size)
            if computed == meta.crcDigest {
                return try decodeStrictly(stored[0..<size], meta: meta, header: header, key: key, repair: nil)
            }
        }
        // MMKV 7.3a: the header holds the size the CRC covers.
        let headerSize = Int(header)
        if meta.holdsActualSize, headerSize != size, headerSize > 0, fits(headerSize), crc(headerSize) == meta.crcDigest
        {
            var repaired = meta
            repaired.actualSize = header
            return try decodeStrictly(
                stored[0..<headerSize], meta: repaired, header: header, key: key, repair: .headerSize)
        }

        let scan = try RegionScan(stored: stored, meta: meta, key: key)
        let reason: CorruptionReason =
            lengthIsValid
            ? .crcMismatch(stored: meta.crcDigest, computed: computed)
            : .lengthOutOfRange(actualSize: size, fileSize: fileSize)
        let kind: DamageKind = lengthIsValid ? .crcMismatch : .lengthError
        let claimedEnd = min(size, capacity)

        if let end = scan.furthestBoundary(withCRC: meta.crcDigest), end > 0 || meta.crcDigest == 0,
            meta.holdsActualSize, end > size, scan.crc(atBoundary: size) != nil
        {
            var repaired = meta
            repaired.actualSize = UInt32(end)
            return try decodeStrictly(
                stored[0..<end], meta: repaired, header: header, key: key, repair: .interruptedAppend)
        }
        if let exact = try checkpointAtClaimedSize(
            stored: stored, meta: meta, header: header, key: key, scan: scan, checkpoints: checkpoints)
        {
            return exact
        }
        if let loss = try crashLoss(
            stored: stored, meta: meta, header: header, key: key, scan: scan, checkpoints: checkpoints)
        {
            return .crashLoss(loss)
        }
        // The longest verified prefix; a checkpoint's that the current IV does not decrypt (one
        // from before a rewrite) is passed over for the next.
        var chosen = PrefixCandidate(size: 0, crc: 0, basis: .nothing)
        for candidate in verifiedCandidates(scan: scan, meta: meta, checkpoints: checkpoints) {
            chosen = candidate
            guard candidate.basis == .checkpoint, candidate.size > 0 else { break }
            var repaired = meta
            repaired.actualSize = UInt32(candidate.size)
            if case .sound = try decodeStrictly(
                stored[0..<candidate.size], meta: repaired, header: header, key: key, repair: nil)
            {
                break
            }
        }
        let (keep, basis) = (chosen.size, chosen.basis)
        let dropped = scan.records(in: keep..<max(keep, claimedEnd))
        var repaired = meta
        repaired.actualSize = UInt32(keep)
        repaired.crcDigest = crc(keep)
        guard
            case .sound(let kept) = try decodeStrictly(
                stored[0..<keep], meta: repaired, header: header, key: key, repair: nil)
        else {
            // The verified bytes decode but are not plausible plain text: the key is wrong.
            return .damaged(wrongKey(reason: reason, droppedBytes: max(claimedEnd, keep), empty: empty))
        }
        let proposal = RecoveryProposal(
            basis: basis, keptBytes: keep, keptRecords: kept.recordCount, keptKeys: kept.index.count,
            // The meta's own CRC ends the data at `keep`: the bytes past it were never committed,
            // and what is dropped is the records written there. Otherwise the meta's size claimed
            // everything up to `claimedEnd` as committed.
            droppedBytes: basis == .currentCRC ? dropped.end - keep : max(0, claimedEnd - keep),
            droppedRecords: dropped.count, droppedKeys: dropped.keys)
        return .damaged(DamageFinding(kind: kind, reason: reason, proposal: proposal, kept: kept))
    }

    /// Decodes a region the meta vouches for; anything that does not decode is damage.
    static func decodeStrictly(
        _ stored: Slice<UnsafeRawBufferPointer>, meta: MetaInfo, header: UInt32, key: CryptKey?, repair: LosslessRepair?
    ) throws(CryptoFailure) -> LoadAssessment {
        // The mirror gets the whole region's capacity, so appends up to the file's end never reallocate it.
        var plain = MirrorBuffer.make(copying: UnsafeRawBufferPointer(rebasing: stored), capacity: stored.base.count)
        let cipher = try key.map { (key) throws(CryptoFailure) in try meta.regionStream(for: key) }
        if let cipher { try cipher.decrypt(&plain) }
        var index = KeyIndex()
        let (summary, hasNonUTF8Key) = index.decodeRecords(of: plain, from: 0)
        let region = SoundRegion(
            meta: meta, header: header, plain: plain, index: index,
            recordCount: summary.recordCount, cipher: cipher, repair: repair)
        let implausible = plain.withUnsafeBytes(RegionValidator.implausibleHolder)
        // With a key, undecodable or implausible plain text (a holder MMKV never writes, keys that
        // are not text) means the key is wrong; without one, garbage from the very first record
        // means the store is encrypted. Plain stores may hold keys that are not UTF-8.
        let keyCheck: FormatError? = key == nil ? nil : implausible ?? (hasNonUTF8Key ? .invalidUTF8 : nil)
        guard let error = summary.error ?? keyCheck else { return .sound(region) }
        let suspectsKey = key != nil || summary.recordCount == 0
        let empty = SoundRegion(
            meta: meta, header: header, plain: [], index: KeyIndex(), recordCount: 0, cipher: nil, repair: nil)
        if suspectsKey {
            return .damaged(wrongKey(reason: .undecodable(error), droppedBytes: plain.count, empty: empty))
        }
        // Keep the records before the bad one: the CRC covers them.
        var keptPlain = Array(plain[0..<summary.validEnd])
        var keptIndex = KeyIndex()
        let keptSummary = keptIndex.decodeRecords(of: keptPlain, from: 0).summary
        keptPlain = keptSummary.error == nil ? keptPlain : []
        var keptMeta = meta
        keptMeta.actualSize = UInt32(keptPlain.count)
        keptMeta.crcDigest = CRC32.update(
            0, UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(rebasing: stored)[0..<keptPlain.count]))
        let kept = SoundRegion(
            meta: keptMeta, header: header, plain: keptPlain, index: keptSummary.error == nil ? keptIndex : KeyIndex(),
            recordCount: keptSummary.recordCount, cipher: nil, repair: nil)
        let proposal = RecoveryProposal(
            basis: .decodablePrefix, keptBytes: kept.plain.count, keptRecords: kept.recordCount,
            keptKeys: kept.index.count,
            droppedBytes: plain.count - kept.plain.count, droppedRecords: 0, droppedKeys: [])
        return .damaged(DamageFinding(kind: .undecodable, reason: .undecodable(error), proposal: proposal, kept: kept))
    }

    /// Damage that points at the wrong key: nothing is worth keeping.
    private static func wrongKey(reason: CorruptionReason, droppedBytes: Int, empty: SoundRegion) -> DamageFinding {
        let proposal = RecoveryProposal(
            basis: .nothing, keptBytes: 0, keptRecords: 0, keptKeys: 0,
            droppedBytes: droppedBytes, droppedRecords: 0, droppedKeys: [])
        return DamageFinding(kind: .wrongKeySuspected, reason: reason, proposal: proposal, kept: blank(empty))
    }

    /// An empty region with the meta's CRC and size cleared.
    static func blank(_ region: SoundRegion) -> SoundRegion {
        var region = region
        region.meta.actualSize = 0
        region.meta.crcDigest = 0
        region.plain = []
        region.index = KeyIndex()
        region.recordCount = 0
        return region
    }
}
