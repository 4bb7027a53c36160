import MappedKVFormat

/// What a load must do with a write-back journal, worked out from docs/FORMAT.md 8.4 apart from
/// the store's own code, and the files a redo leaves (8.3 steps 4 to 7, as a load runs them).
///
/// The harness checks the load against it: a read-only open throws `interruptedWriteBack` exactly
/// when a redo is due, and a read-write load continues from the files ``redone(_:dataFile:metaFile:)``
/// gives, which the inspector's verdict, the damaged copies and the untouched-files checks then expect.
enum JournalReplay {
    enum Action {
        /// There is no journal file.
        case none
        /// The journal is torn, or the stored meta says its write-back never started or completed
        /// and was appended to since: a writer deletes it and changes nothing else.
        case ignore
        /// The write-back may be unfinished: a writer finishes it from the journal.
        case redo(WriteBackJournal)
    }

    /// The rule of FORMAT.md 8.4 for `journalFile` against `metaFile` (a missing or short meta file
    /// stores a zero stamp).
    static func action(journalFile: [UInt8]?, metaFile: [UInt8]?) -> Action {
        guard let journalFile else { return .none }
        guard let journal = WriteBackJournal(parsing: journalFile) else { return .ignore }
        let stored = metaFile.flatMap { $0.count >= MetaInfo.size ? $0 : nil }
        let sequence = stored.map { RegionSealer.load($0, at: MetaInfo.Offset.sequence) } ?? 0
        let crc = stored.map { RegionSealer.load($0, at: MetaInfo.Offset.crcDigest) } ?? 0
        let size = stored.map { RegionSealer.load($0, at: MetaInfo.Offset.actualSize) } ?? 0
        guard sequence == journal.base.sequence &+ 1 else { return .ignore }
        let final = journal.meta
        // Completed, then appended to: the stored struct is the new meta but for the CRC and size.
        let crcField = MetaInfo.Offset.crcDigest..<(MetaInfo.Offset.crcDigest + 4)
        let sizeField = MetaInfo.Offset.actualSize..<(MetaInfo.Offset.actualSize + 4)
        let finalBytes = final.serialized
        if let stored,
            (0..<MetaInfo.size).allSatisfy({
                crcField.contains($0) || sizeField.contains($0) || stored[$0] == finalBytes[$0]
            }),
            crc != final.crcDigest || size != final.actualSize
        {
            return .ignore
        }
        guard mix(crc, of: journal.base.crcDigest, final.crcDigest),
            mix(size, of: journal.base.actualSize, final.actualSize)
        else { return .ignore }
        return .redo(journal)
    }

    /// The data and meta files after a read-write load redid `journal` over these (a missing file
    /// is created empty first), or nil if the region does not fit in the file the journal asks
    /// for, which no writer produces.
    static func redone(
        _ journal: WriteBackJournal, dataFile: [UInt8]?, metaFile: [UInt8]?
    ) -> (data: [UInt8], meta: [UInt8])? {
        var data = dataFile ?? []
        // What follows the journal's region is zeroed up to the end of the file as it was.
        let staleEnd = data.count
        let target = Int(journal.fileSize)
        if target > data.count { data += [UInt8](repeating: 0, count: target - data.count) }
        let regionEnd = 4 + journal.region.count
        guard regionEnd <= data.count else { return nil }
        data.replaceSubrange(4..<regionEnd, with: journal.region)
        if regionEnd < min(staleEnd, data.count) {
            data.replaceSubrange(
                regionEnd..<min(staleEnd, data.count),
                with: [UInt8](repeating: 0, count: min(staleEnd, data.count) - regionEnd))
        }
        if target < data.count { data.removeSubrange(target...) }
        // The meta file is made a whole number of pages, at least one, before the struct is stored.
        var meta = metaFile ?? []
        let page = StoreImage.pageSize
        if meta.count < page || meta.count % page != 0 {
            let pages = max(1, (meta.count + page - 1) / page)
            meta += [UInt8](repeating: 0, count: pages * page - meta.count)
        }
        meta.replaceSubrange(0..<MetaInfo.size, with: journal.meta.serialized)
        // A meta with durability checkpoints gets the redone state as the newest and as the
        // durability point: the redo is flushed (docs/FORMAT.md 3.5, 8.3 step 7).
        let checkpoint = DurabilityCheckpoints.Checkpoint(journal.meta.stamp)
        meta.withUnsafeMutableBytes { bytes in
            DurabilityCheckpoints.add(checkpoint, to: bytes)
            DurabilityCheckpoints.setDurable(checkpoint, in: bytes)
        }
        return (data, meta)
    }

    /// Whether each byte of `value` is the byte of `old` or of `new` at the same place.
    private static func mix(_ value: UInt32, of old: UInt32, _ new: UInt32) -> Bool {
        (0..<4).allSatisfy { byte in
            let shift = UInt32(byte * 8)
            return (value >> shift) & 0xFF == (old >> shift) & 0xFF || (value >> shift) & 0xFF == (new >> shift) & 0xFF
        }
    }
}
