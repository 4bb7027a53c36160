import Glibc

/// The two files of a store, as one fuzz input describes them.
///
/// Input format: one ``FuzzFlags`` byte, then by layout:
/// - ``FuzzFlags/Layout/split``: a little-endian `UInt16` code, then the meta file, then the data
///   file. Code `0xFFFF`: no meta file, the rest is the data file. `0xFFFE`: no data file, the rest
///   is the meta file. Otherwise the meta file is the next `code % 8192` bytes (as many as there are).
/// - the other layouts: 112 bytes of meta struct (zero-padded if the input is shorter), written
///   as a one-page meta file, then the data file (header and region), zero-padded to whole
///   pages, at least one; ``FuzzFlags/Layout/sealed`` and ``FuzzFlags/Layout/torn`` first
///   encrypt and seal it (see ``RegionSealer``).
struct StoreImage {
    var flags: FuzzFlags
    /// The meta (`.crc`) file, or nil for none.
    var metaFile: [UInt8]?
    /// The data file, or nil for none.
    var dataFile: [UInt8]?

    static let metaStructSize = 112
    static let splitMetaModulus = 8192
    static let noMetaFile: UInt16 = 0xFFFF
    static let noDataFile: UInt16 = 0xFFFE
    /// The page size that MMKV and the store size files by.
    static let pageSize = max(4096, sysconf(Int32(_SC_PAGESIZE)))

    init(flags: FuzzFlags, metaFile: [UInt8]?, dataFile: [UInt8]?) {
        self.flags = flags
        self.metaFile = metaFile
        self.dataFile = dataFile
    }

    /// Decodes a fuzz input.
    init(input: UnsafeRawBufferPointer) {
        flags = FuzzFlags(byte: input.first ?? 0)
        let rest = input.dropFirst()
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
            metaFile = Self.paddedToPages(meta)
            dataFile = Self.paddedToPages(data)
        }
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
        }
        return bytes
    }

    /// `bytes` zero-padded to a whole number of pages, at least one.
    static func paddedToPages(_ bytes: [UInt8]) -> [UInt8] {
        let pages = max(1, (bytes.count + pageSize - 1) / pageSize)
        return bytes + [UInt8](repeating: 0, count: pages * pageSize - bytes.count)
    }
}
