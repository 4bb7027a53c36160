import MappedKVFormat

/// The checks on a store's data file that need no decoding: its header, the used size MMKV
/// takes, a blank meta over data, and a plausible holder. Pure.
enum RegionValidator {
    /// The data file's header, or 0 when the file is shorter than 4 bytes.
    static func header(of dataFile: UnsafeRawBufferPointer) -> UInt32 {
        guard dataFile.count >= 4 else { return 0 }
        return UInt32(littleEndian: dataFile.loadUnaligned(as: UInt32.self))
    }

    /// The used size MMKV would take: from the meta from version 3, otherwise from the header.
    static func actualSize(meta: MetaInfo, header: UInt32) -> Int {
        Int(meta.holdsActualSize ? meta.actualSize : header)
    }

    /// Whether the meta is blank (version 0 and no size) while the data file holds non-zero bytes.
    ///
    /// That is a meta file that was lost, emptied or zeroed: a fresh pair is all zeros, and a
    /// genuine pre-sequence (version 0) file records its size in the header. MMKV would load such
    /// a store as empty and overwrite the data on the next write.
    static func isBlankMetaOverData(meta: MetaInfo, dataFile: UnsafeRawBufferPointer) -> Bool {
        guard meta.version == .default, header(of: dataFile) == 0, dataFile.count > 4 else { return false }
        return UnsafeRawBufferPointer(rebasing: dataFile[4...]).contains { $0 != 0 }
    }

    /// The longest item-size holder MMKV writes (encrypted stores may use 1 to 5 bytes).
    static let maximumPlausibleHolderLength = 5

    /// Why a decrypted region cannot be MMKV's, judged by its holder, or nil if the holder is plausible.
    /// A wrong key usually breaks the record framing; this and UTF-8 keys catch it when it does not.
    static func implausibleHolder(in region: UnsafeRawBufferPointer) -> FormatError? {
        guard !region.isEmpty else { return nil }
        guard let length = ItemSizeHolder.length(in: region), length <= maximumPlausibleHolderLength else {
            return .malformedVarint(offset: 0)
        }
        return nil
    }
}
