import Glibc

/// The files of a store, as one fuzz input describes them.
///
/// Input format: one ``FuzzFlags`` byte, then the files, then optionally a meta tail section and a
/// journal section:
/// - ``FuzzFlags/Layout/split``: a little-endian `UInt16` code, then the meta file, then the data
///   file. Code `0xFFFF`: no meta file, the rest is the data file. `0xFFFE`: no data file, the rest
///   is the meta file. Otherwise the meta file is the next `code % 8192` bytes (as many as there are).
/// - the other layouts: 112 bytes of meta struct (zero-padded if the input is shorter), written
///   as a one-page meta file, then the data file (header and region), zero-padded to whole
///   pages, at least one; ``FuzzFlags/Layout/sealed`` and ``FuzzFlags/Layout/torn`` first
///   encrypt and seal it (see ``RegionSealer``).
/// - after the last `METATAIL`, in the page layouts: the meta file's bytes from offset 112 on
///   (at most to the end of its page), which are zeros otherwise. The split layout gives them
///   directly; in it the marker is data like any other.
/// - from the last `MKVWB001` on: the write-back journal (see ``JournalSection``), which may also
///   change the stored meta's sequence, CRC and size.
struct StoreImage {
    var flags: FuzzFlags
    /// The meta (`.crc`) file, or nil for none.
    var metaFile: [UInt8]?
    /// The data file, or nil for none.
    var dataFile: [UInt8]?
    /// The meta file's bytes from offset 112 on, in the page layouts (input form, for ``encoded()``).
    var metaTail: [UInt8] = []
    /// The journal section (input form, for ``encoded()``), or nil for none.
    var journal: JournalSection?
    /// The journal file, or nil for none.
    var journalFile: [UInt8]?

    static let metaStructSize = 112
    static let splitMetaModulus = 8192
    static let noMetaFile: UInt16 = 0xFFFF
    static let noDataFile: UInt16 = 0xFFFE
    static let metaTailMarker = Array("METATAIL".utf8)
    /// The page size that MMKV and the store size files by.
    static let pageSize = max(4096, sysconf(Int32(_SC_PAGESIZE)))

    init(
        flags: FuzzFlags, metaFile: [UInt8]?, dataFile: [UInt8]?, metaTail: [UInt8] = [], journal: JournalSection? = nil
    ) {
        self.flags = flags
        self.metaFile = metaFile
        self.dataFile = dataFile
        self.metaTail = metaTail
        self.journal = journal
    }

    /// Decodes a fuzz input.
    init(input: UnsafeRawBufferPointer) {
        flags = FuzzFlags(byte: input.first ?? 0)
        var rest = Array(input.dropFirst())[...]
        if let start = Self.lastIndex(of: JournalSection.magic, in: rest) {
            journal = JournalSection(decoding: rest[(start + JournalSection.magic.count)...])
            rest = rest[..<start]
        }
        if flags.layout != .split, let start = Self.lastIndex(of: Self.metaTailMarker, in: rest) {
            metaTail = Array(rest[(start + Self.metaTailMarker.count)...].prefix(Self.pageSize - Self.metaStructSize))
            rest = rest[..<start]
        }
        switch flags.layout {
        case .split:
            let codeBytes = Array(rest.prefix(2)) + [0, 0]
            let code = UInt16(codeBytes[0]) | UInt16(codeBytes[1]) << 8
            let files = Array(rest.dropFirst(2))
            switch code {
            case Self.noMetaFile:
                metaFile = nil
                dataFile = files
            case Self.noDataFile:
                metaFile = files
                dataFile = nil
            default:
                let metaLength = min(Int(code) % Self.splitMetaModulus, files.count)
                metaFile = Array(files[..<metaLength])
                dataFile = Array(files[metaLength...])
            }
        case .raw, .sealed, .torn:
            var meta = Array(rest.prefix(Self.metaStructSize))
            meta += [UInt8](repeating: 0, count: Self.metaStructSize - meta.count)
            var data = Array(rest.dropFirst(Self.metaStructSize))
            if flags.layout != .raw {
                RegionSealer(key: flags.key.cryptKey, setsUsedSize: flags.layout == .sealed).seal(
                    meta: &meta, data: &data)
            }
            metaFile = Self.paddedToPages(meta + metaTail)
            dataFile = Self.paddedToPages(data)
        }
        journalFile = journal?.journalFile(linking: &metaFile, key: flags.key.cryptKey)
    }

    /// The fuzz input that decodes to these files (the inverse of ``init(input:)``), for seeds.
    /// For the page layouts, `metaFile` must be the 112-byte struct and `dataFile` the data file
    /// before padding (trailing zeros may be left out: the padding restores them).
    func encoded() -> [UInt8] {
        var bytes = [flags.byte]
        switch flags.layout {
        case .split:
            let meta = metaFile ?? []
            let code: UInt16 =
                metaFile == nil ? Self.noMetaFile : dataFile == nil ? Self.noDataFile : UInt16(meta.count)
            precondition(
                metaFile == nil || dataFile == nil || meta.count < Self.splitMetaModulus,
                "meta file too long for the split layout")
            bytes += [UInt8(code & 0xFF), UInt8(code >> 8)]
            bytes += meta + (dataFile ?? [])
        case .raw, .sealed, .torn:
            let meta = metaFile ?? []
            precondition(meta.count == Self.metaStructSize, "the page layouts take a 112-byte meta struct")
            bytes += meta + (dataFile ?? [])
            if !metaTail.isEmpty { bytes += Self.metaTailMarker + metaTail }
        }
        if let journal { bytes += journal.encoded }
        return bytes
    }

    /// Where the last occurrence of `marker` in `bytes` starts.
    static func lastIndex(of marker: [UInt8], in bytes: ArraySlice<UInt8>) -> Int? {
        guard bytes.count >= marker.count else { return nil }
        return stride(from: bytes.endIndex - marker.count, through: bytes.startIndex, by: -1).first { start in
            bytes[start..<(start + marker.count)].elementsEqual(marker)
        }
    }

    /// `bytes` zero-padded to a whole number of pages, at least one.
    static func paddedToPages(_ bytes: [UInt8]) -> [UInt8] {
        let pages = max(1, (bytes.count + pageSize - 1) / pageSize)
        return bytes + [UInt8](repeating: 0, count: pages * pageSize - bytes.count)
    }
}
