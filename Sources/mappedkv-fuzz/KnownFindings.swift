import Glibc

/// Findings already reported against the library, which the harness steps around so that fuzzing
/// (and CI) can go on looking for others. Set `MAPPEDKV_FUZZ_NO_WORKAROUNDS` to check them again
/// (to confirm a fix).
enum KnownFindings {
    static let workaroundsEnabled = getenv("MAPPEDKV_FUZZ_NO_WORKAROUNDS") == nil

    /// F2 (fixed): a journal that parsed (its CRC matched) but whose file size ended before its
    /// region trapped a read-write load that redid it, on `StoreFiles.regionDestination`'s
    /// precondition. Such a journal is now torn (`WriteBackJournal(parsing:)`, docs/FORMAT.md 8.1),
    /// so the harness no longer steps around it.
    static func raisesJournalFileSize(_ fileSize: UInt64, regionEnd: Int) -> UInt64 { fileSize }
}
