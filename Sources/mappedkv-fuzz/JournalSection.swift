import MappedKV
import MappedKVFormat

/// The part of a fuzz input that becomes the store's write-back journal (`<id>.writeback`,
/// docs/FORMAT.md 8), so that inputs reach the journal redo and the rules that ignore a journal.
///
/// It starts at the last `MKVWB001` (the journal's own magic) of the input: the magic, a ``Mode``
/// byte, then the body. With ``Mode/asGiven`` the journal file is the magic and the body exactly
/// (torn and damaged journals, whose CRC random bytes almost never match). Otherwise the body is
/// base sequence, base CRC and base size (u32 each), the file size (u64), the 112-byte new meta
/// (zero-padded) and the new region as plain text, and the harness writes the journal a writer
/// would: the region encrypted under the new meta's IV, the new meta's CRC, size and last-confirmed
/// size and CRC set for it, the file size at least the region's end, and the journal's length and
/// CRC fields right.
struct JournalSection {
    /// How the section becomes a journal, and what it does to the stored meta.
    struct Mode: OptionSet {
        let rawValue: UInt8
        /// The journal file is the magic and the body, unsealed.
        static let asGiven = Mode(rawValue: 1)
        /// The journal's base stamp is the stored meta's, and the stored sequence becomes the
        /// journal's marker: a writer killed after storing the marker (FORMAT.md 8.3 step 3).
        static let linked = Mode(rawValue: 2)
        /// With ``linked``: the stored CRC is the new meta's too (killed within step 7).
        static let storesNewCRC = Mode(rawValue: 4)
        /// With ``linked``: the stored size is the new meta's too.
        static let storesNewSize = Mode(rawValue: 8)
    }

    static let magic = WriteBackJournal.magic
    /// Base stamp (12) and file size (8) before the meta in a sealed section's body.
    static let headerSize = 20
    /// A parsable journal's file size is capped here past the region, so that no input makes the
    /// redo grow the data file by gigabytes (in /dev/shm, that is memory).
    static let fileSizeSlack = 8 * StoreImage.pageSize

    var mode: Mode
    var body: [UInt8]

    /// The section at `bytes` (which start after the magic).
    init(decoding bytes: ArraySlice<UInt8>) {
        mode = Mode(rawValue: bytes.first ?? 0)
        body = Array(bytes.dropFirst())
    }

    /// A sealed section, for seeds: `region` is plain text.
    init(mode: Mode, base: MetaStamp, fileSize: UInt64, meta: [UInt8], region: [UInt8]) {
        precondition(!mode.contains(.asGiven) && meta.count == MetaInfo.size, "a sealed section takes a meta struct")
        self.mode = mode
        var body: [UInt8] = []
        for value in [base.sequence, base.crcDigest, base.actualSize] { Self.append(value, to: &body) }
        Self.append(UInt32(truncatingIfNeeded: fileSize), to: &body)
        Self.append(UInt32(truncatingIfNeeded: fileSize >> 32), to: &body)
        self.body = body + meta + region
    }

    /// The section as it appears in an input, magic included.
    var encoded: [UInt8] { Self.magic + [mode.rawValue] + body }

    /// The journal file; links `metaFile` to it first if the mode says so (a meta file shorter
    /// than the struct is left alone).
    func journalFile(linking metaFile: inout [UInt8]?, key: CryptKey?) -> [UInt8] {
        if mode.contains(.asGiven) { return Self.capped(Self.magic + body) }
        let fields = body + [UInt8](repeating: 0, count: max(0, Self.headerSize + MetaInfo.size - body.count))
        var meta = Array(fields[Self.headerSize..<(Self.headerSize + MetaInfo.size)])
        var data = [0, 0, 0, 0] + Array(fields[(Self.headerSize + MetaInfo.size)...])
        RegionSealer(key: key, setsUsedSize: true).seal(meta: &meta, data: &data)
        let region = Array(data[4...])
        // A write-back confirms what it wrote (`MetaInfo.update`), so its meta's last-confirmed size
        // and CRC are the new ones; without that, the marker would look like a completed write-back.
        RegionSealer.store(
            UInt32(truncatingIfNeeded: region.count), in: &meta, at: MetaInfo.Offset.lastConfirmedActualSize)
        RegionSealer.store(
            RegionSealer.load(meta, at: MetaInfo.Offset.crcDigest), in: &meta, at: MetaInfo.Offset.lastConfirmedCRC)
        var base = MetaStamp(
            sequence: RegionSealer.load(fields, at: 0), crcDigest: RegionSealer.load(fields, at: 4),
            actualSize: RegionSealer.load(fields, at: 8))
        if mode.contains(.linked), var stored = metaFile, stored.count >= MetaInfo.size {
            base = MetaStamp(
                sequence: RegionSealer.load(stored, at: MetaInfo.Offset.sequence),
                crcDigest: RegionSealer.load(stored, at: MetaInfo.Offset.crcDigest),
                actualSize: RegionSealer.load(stored, at: MetaInfo.Offset.actualSize))
            RegionSealer.store(base.sequence &+ 1, in: &stored, at: MetaInfo.Offset.sequence)
            if mode.contains(.storesNewCRC) {
                RegionSealer.store(RegionSealer.load(meta, at: MetaInfo.Offset.crcDigest), in: &stored, at: 0)
            }
            if mode.contains(.storesNewSize) {
                let size = RegionSealer.load(meta, at: MetaInfo.Offset.actualSize)
                RegionSealer.store(size, in: &stored, at: MetaInfo.Offset.actualSize)
            }
            metaFile = stored
        }
        let given = UInt64(RegionSealer.load(fields, at: 12)) | UInt64(RegionSealer.load(fields, at: 16)) << 32
        let fileSize = max(UInt64(4 + region.count), given % UInt64(4 + region.count + Self.fileSizeSlack))
        let info: MetaInfo
        do { info = try MetaInfo(parsing: meta) } catch { harnessFailure("a 112-byte meta does not parse: \(error)") }
        return WriteBackJournal(base: base, fileSize: fileSize, meta: info, region: region).serialized
    }

    /// `journal`, or for one that parses and would grow the data file past the cap, the same
    /// journal with the file size capped (and its CRC set again).
    private static func capped(_ journal: [UInt8]) -> [UInt8] {
        guard var parsed = WriteBackJournal(parsing: journal) else { return journal }
        let regionEnd = 4 + parsed.region.count
        let limit = UInt64(regionEnd + fileSizeSlack)
        let fileSize = parsed.fileSize % (limit + 1)
        guard fileSize != parsed.fileSize else { return journal }
        parsed.fileSize = fileSize
        return parsed.serialized
    }

    private static func append(_ value: UInt32, to bytes: inout [UInt8]) {
        for index in 0..<4 { bytes.append(UInt8(truncatingIfNeeded: value >> (8 * index))) }
    }
}
