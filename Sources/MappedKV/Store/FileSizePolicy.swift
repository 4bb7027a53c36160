import MappedKVFormat
import MappedKVIO

/// MMKV's rules for sizing the data file (docs/FORMAT.md section 2.10), as pure functions.
enum FileSizePolicy {
    /// The largest data file MappedKV maps: the region is addressed by `UInt32` offsets.
    static func maximumFileSize(pageSize: Int) -> Int {
        (RecordLimits.maximumRegionLength + 4) / pageSize * pageSize
    }

    /// The file size a full write-back needs, by MMKV's doubling and future-usage rule (`expandAndWriteBack`).
    ///
    /// - Parameters:
    ///   - fileSize: the current file size.
    ///   - liveLength: the holder plus every live record, in bytes.
    ///   - incomingLength: the record about to be appended after the write-back (or the records
    ///     of a batch).
    ///   - incomingCount: how many records `incomingLength` holds: 1 for a set, as MMKV counts it.
    ///     A batch counts its records, so that their average size, not their sum, is the size of
    ///     one future record.
    ///   - liveCount: the number of live keys.
    ///   - needSync: false only for the first insert into an empty store.
    ///   - reserve: free bytes to leave after the write-back at least (``reserveForCompaction(after:pageSize:)``),
    ///     when that is more than MMKV's future-usage estimate.
    /// - Returns: the new size, or nil if even the largest file could not hold the data.
    static func sizeForWriteBack(
        fileSize: Int, liveLength: Int, incomingLength: Int, incomingCount: Int = 1, liveCount: Int, needSync: Bool,
        pageSize: Int, reserve: Int = 0
    ) -> Int? {
        let maximum = maximumFileSize(pageSize: pageSize)
        let needed = liveLength + 4 + incomingLength
        guard needed < maximum else { return nil }
        let n = max(1, liveCount + max(1, incomingCount))
        let average = (needed + n - 1) / n
        let futureUsage = max(average * max(8, n / 2), reserve)
        var size = max(fileSize, pageSize)
        if needed >= size || (needSync && needed + futureUsage >= size) {
            repeat {
                size *= 2
            } while needed + futureUsage >= size && size < maximum
        }
        return min(size, maximum)
    }

    /// The most free space a compaction leaves for amortizing (docs/FORMAT.md 2.10): 32 pages.
    static let maximumCompactionReserve = 32

    /// The free space a compaction to make room leaves at least, when this instance has already
    /// compacted the store `earlierCompactions` times: none for the first (MMKV's rule alone), then
    /// two pages, four, ... up to ``maximumCompactionReserve`` pages. A store whose few live keys are
    /// rewritten over and over (each compaction costs a journal and four flushes) thus grows to where
    /// a compaction comes every few thousand sets instead of every few hundred; a store compacted
    /// once in a while keeps MMKV's sizes.
    static func reserveForCompaction(after earlierCompactions: Int, pageSize: Int) -> Int {
        guard earlierCompactions > 0 else { return 0 }
        let pages = 1 << min(earlierCompactions, 5)
        return min(pages, maximumCompactionReserve) * pageSize
    }

    /// The file size after `trim()`: halve while more than twice the used bytes, not below `minimum`,
    /// then round up to whole pages, as MMKV's truncate does (a file grown from another expected
    /// capacity, say 3 pages, would otherwise halve to 1.5).
    static func sizeAfterTrim(fileSize: Int, actualSize: Int, minimum: Int, pageSize: Int) -> Int {
        var size = fileSize
        while size > 2 * (actualSize + 4) && size / 2 >= minimum { size /= 2 }
        return PageSize.roundUp(max(size, minimum), pageSize: pageSize)
    }
}
