import Glibc
import MappedKV

/// Findings already reported against the library, which the harness steps around so that fuzzing
/// can go on looking for others. Set `MAPPEDKV_FUZZ_NO_WORKAROUNDS` to check them again (to confirm a fix).
enum KnownFindings {
    static let workaroundsEnabled = getenv("MAPPEDKV_FUZZ_NO_WORKAROUNDS") == nil

    /// F1: `StoreInspector.inspect(location:dataFile:metaFile:cryptKey:)` returns early when the meta
    /// file is 1 to 111 bytes (`storedMeta == nil`), before it computes `verdict`, which keeps its
    /// default `.sound` although the load reports `metaMissing` damage. Minimal input: `00 00 5b 00`
    /// (split layout: a 1-byte meta file, an empty data file).
    static func skipsVerdictCheck(_ report: InspectionReport) -> Bool {
        workaroundsEnabled && report.storedMeta == nil
    }
}
