import MappedKVCrypto
import MappedKVFormat

/// Writes lost to a crash: the files hold a prefix of the store's history that is at least its
/// last durability point, and the meta vouches for more than reached the disk (docs/FORMAT.md 7.3d).
struct CrashLossFinding {
    /// The state to load: the longest verified prefix.
    var kept: SoundRegion
    /// The checkpoint the kept prefix matches: "from which point" writes were lost.
    var keptCheckpoint: DurabilityCheckpoints.Checkpoint
    /// The last durability point, which the kept prefix includes.
    var durable: DurabilityCheckpoints.Checkpoint
    /// The bytes the meta claimed past the kept prefix.
    var lostBytes: Int
    /// The writes the checkpoints and the meta recorded past the kept prefix.
    var lostWrites: Int

    /// The report for the caller.
    func report(storeID: String, isReadOnly: Bool) -> CrashLossReport {
        CrashLossReport(
            storeID: storeID, keptBytes: kept.plain.count, keptKeys: kept.index.count, lostBytes: lostBytes,
            lostWrites: lostWrites, durableBytes: Int(durable.actualSize), isReadOnly: isReadOnly)
    }
}

/// One (size, CRC) pair that might describe a prefix of the data on disk, and what vouches for it.
struct PrefixCandidate {
    var size: Int
    var crc: UInt32
    var basis: RecoveryProposal.Basis
}

extension LoadAssessment {
    /// Every state something recorded that the data on disk still holds, longest first: the
    /// furthest record boundary with the meta's own CRC, the meta's last confirmed write-back,
    /// each checkpoint whose size is a record boundary with its CRC, and the empty prefix last.
    static func verifiedCandidates(
        scan: RegionScan, meta: MetaInfo, checkpoints: DurabilityCheckpoints.Contents?
    ) -> [PrefixCandidate] {
        var candidates: [PrefixCandidate] = []
        if let end = scan.furthestBoundary(withCRC: meta.crcDigest), end > 0 || meta.crcDigest == 0 {
            candidates.append(PrefixCandidate(size: end, crc: meta.crcDigest, basis: .currentCRC))
        }
        let last = Int(meta.lastConfirmedActualSize)
        if meta.holdsActualSize, last > 0, scan.crc(atBoundary: last) == meta.lastConfirmedCRC {
            candidates.append(PrefixCandidate(size: last, crc: meta.lastConfirmedCRC, basis: .lastConfirmed))
        }
        if let checkpoints {
            for checkpoint in checkpoints.recent + [checkpoints.durable].compactMap({ $0 })
            where holds(checkpoint, scan) {
                candidates.append(
                    PrefixCandidate(size: Int(checkpoint.actualSize), crc: checkpoint.crcDigest, basis: .checkpoint))
            }
        }
        candidates.append(PrefixCandidate(size: 0, crc: 0, basis: .nothing))
        // Longest first; among equal sizes the meta's own fields before the checkpoints.
        let rank: [RecoveryProposal.Basis: Int] = [.currentCRC: 0, .lastConfirmed: 1, .checkpoint: 2, .nothing: 3]
        return candidates.sorted { ($0.size, -(rank[$0.basis] ?? 9)) > ($1.size, -(rank[$1.basis] ?? 9)) }
    }

    /// Whether the data holds `checkpoint`'s state: its size is a record boundary whose running CRC is its CRC.
    static func holds(_ checkpoint: DurabilityCheckpoints.Checkpoint, _ scan: RegionScan) -> Bool {
        scan.crc(atBoundary: Int(checkpoint.actualSize)) == checkpoint.crcDigest
    }

    /// The writes lost to a crash, if that is what the files show: the longest decodable
    /// verified prefix includes the last durability point, which the data still holds.
    ///
    /// Under the contract's assumptions (docs/FORMAT.md 7.3d: sectors written whole, flushes
    /// that mean it) a durability point is on disk, and so everything before it; a power loss
    /// can only cost what came after. Anything short of it is damage.
    static func crashLoss(
        stored: UnsafeRawBufferPointer, meta: MetaInfo, header: UInt32, key: CryptKey?, scan: RegionScan,
        checkpoints: DurabilityCheckpoints.Contents?
    ) throws(CryptoFailure) -> CrashLossFinding? {
        guard let checkpoints, let durable = checkpoints.durable, holds(durable, scan) else { return nil }
        for candidate in verifiedCandidates(scan: scan, meta: meta, checkpoints: checkpoints) {
            guard candidate.size >= Int(durable.actualSize) else { return nil }
            var repaired = meta
            repaired.actualSize = UInt32(candidate.size)
            repaired.crcDigest = candidate.crc
            // A checkpoint from before a rewrite may hold bytes the current IV does not decrypt.
            guard
                case .sound(var kept) = try decodeStrictly(
                    stored[0..<candidate.size], meta: repaired, header: header, key: key, repair: nil)
            else { continue }
            // The meta's CRC and size are stored in one sector: a CRC that matches while the size
            // does not is damage to the meta, not a crash.
            let claimed = Int(meta.holdsActualSize ? meta.actualSize : header)
            guard candidate.basis != .currentCRC || candidate.size == claimed else { return nil }
            kept.repair = nil
            let later = Set(
                (checkpoints.recent + [DurabilityCheckpoints.Checkpoint(meta.stamp)]).filter {
                    Int($0.actualSize) > candidate.size
                }
                .map { [$0.actualSize, $0.crcDigest] })
            return CrashLossFinding(
                kept: kept,
                keptCheckpoint: DurabilityCheckpoints.Checkpoint(
                    actualSize: UInt32(candidate.size), crcDigest: candidate.crc, sequence: meta.sequence),
                durable: durable, lostBytes: max(0, claimed - candidate.size), lostWrites: max(later.count, 1))
        }
        return nil
    }

    /// The region loaded losslessly when a checkpoint vouches for exactly the size the meta
    /// claims: the meta's CRC is the only thing wrong, and the checkpoint's replaces it.
    static func checkpointAtClaimedSize(
        stored: UnsafeRawBufferPointer, meta: MetaInfo, header: UInt32, key: CryptKey?, scan: RegionScan,
        checkpoints: DurabilityCheckpoints.Contents?
    ) throws(CryptoFailure) -> LoadAssessment? {
        guard let checkpoints, meta.holdsActualSize else { return nil }
        let all = checkpoints.recent + [checkpoints.durable].compactMap { $0 }
        guard let match = all.last(where: { $0.actualSize == meta.actualSize && holds($0, scan) }) else { return nil }
        var repaired = meta
        repaired.crcDigest = match.crcDigest
        let size = Int(meta.actualSize)
        guard
            case .sound(let region) = try decodeStrictly(
                stored[0..<size], meta: repaired, header: header, key: key, repair: .checkpoint)
        else { return nil }
        return .sound(region)
    }
}
