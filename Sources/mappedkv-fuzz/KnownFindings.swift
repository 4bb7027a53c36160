import Glibc

/// Findings already reported against the library, which the harness steps around so that fuzzing
/// (and CI) can go on looking for others. Set `MAPPEDKV_FUZZ_NO_WORKAROUNDS` to check them again
/// (to confirm a fix).
enum KnownFindings {
    static let workaroundsEnabled = getenv("MAPPEDKV_FUZZ_NO_WORKAROUNDS") == nil

    /// F2: a journal that parses (its CRC matches) but whose file size ends before its region traps
    /// a read-write load that redoes it, on `StoreFiles.regionDestination`'s precondition ("write
    /// past the mapped data file"), when the data file is shorter than the region too: the redo
    /// grows the data file only to the journal's size, then writes the whole region. No writer
    /// of this package makes such a journal. Minimal input: `tools/fuzz/README.md`, Known findings.
    /// Stepped around by raising the file size to the region's end.
    static func raisesJournalFileSize(_ fileSize: UInt64, regionEnd: Int) -> UInt64 {
        workaroundsEnabled ? max(fileSize, UInt64(regionEnd)) : fileSize
    }
}
