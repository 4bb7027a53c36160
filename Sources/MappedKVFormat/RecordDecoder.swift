/// Where one record sits in a data region; every offset is relative to the region's first byte.
package struct RecordLocation: Equatable, Sendable {
    /// The offset of the record's first byte.
    package var start: Int
    /// The offset of the key's first byte.
    package var keyStart: Int
    /// The key length in bytes.
    package var keyLength: Int
    /// The offset of the value's first byte.
    package var valueStart: Int
    /// The value length in bytes; zero marks a deletion.
    package var valueLength: Int

    /// Creates a location from its offsets.
    @inlinable
    package init(start: Int, keyStart: Int, keyLength: Int, valueStart: Int, valueLength: Int) {
        self.start = start
        self.keyStart = keyStart
        self.keyLength = keyLength
        self.valueStart = valueStart
        self.valueLength = valueLength
    }

    /// Whether this record deletes its key.
    @inlinable package var isDeletion: Bool { valueLength == 0 }
    /// The offset just past the record.
    @inlinable package var end: Int { valueStart + valueLength }
    /// The key's byte range.
    @inlinable package var keyRange: Range<Int> { keyStart..<(keyStart + keyLength) }
    /// The value's byte range.
    @inlinable package var valueRange: Range<Int> { valueStart..<(valueStart + valueLength) }
}

/// What a pass of ``RecordDecoder`` found.
package struct DecodeSummary: Equatable, Sendable {
    /// The offset just past the last record (or holder, or skipped zero byte) that decoded.
    package var validEnd: Int
    /// How many records decoded, deletions included.
    package var recordCount: Int
    /// How many zero-length keys were skipped.
    package var skippedEmptyKeys: Int
    /// Why decoding stopped before the end, or nil if it reached the end.
    package var error: FormatError?

    /// Creates a summary.
    @inlinable
    package init(validEnd: Int, recordCount: Int, skippedEmptyKeys: Int, error: FormatError?) {
        self.validEnd = validEnd
        self.recordCount = recordCount
        self.skippedEmptyKeys = skippedEmptyKeys
        self.error = error
    }

    /// Whether the whole range decoded.
    package var isComplete: Bool { error == nil }
}

/// Walks the records of a data region as MMKV's `decodeOneMap` does (docs/FORMAT.md section 2.6).
///
/// The decoder reports every record it can parse, in file order, and stops at the first error.
/// A *strict* load discards everything when ``DecodeSummary/error`` is set; a *greedy* load keeps
/// the records reported before it.
package enum RecordDecoder {
    /// Decodes `region[start...]`, reading and skipping the item-size holder first if `skipsHolder`.
    ///
    /// `visit` is called once per decoded record, deletions included, in file order.
    @inlinable
    package static func decode(
        _ region: UnsafeRawBufferPointer,
        from start: Int = 0,
        skipsHolder: Bool,
        visit: (RecordLocation) -> Void
    ) -> DecodeSummary {
        var cursor = ByteCursor(region, position: start)
        var summary = DecodeSummary(validEnd: start, recordCount: 0, skippedEmptyKeys: 0, error: nil)
        do throws(FormatError) {
            if skipsHolder && !cursor.isAtEnd {
                _ = try cursor.readVarint64()
                summary.validEnd = cursor.position
            }
            while !cursor.isAtEnd {
                let recordStart = cursor.position
                let keyLength = try cursor.readLength()
                if keyLength == 0 {
                    summary.skippedEmptyKeys += 1
                    summary.validEnd = cursor.position
                    continue
                }
                guard keyLength <= RecordLimits.mmkvMaximumKeyLength else {
                    throw .keyTooLong(offset: recordStart, length: keyLength)
                }
                let keyStart = cursor.position
                cursor.position += keyLength
                let valueLength = try cursor.readLength()
                let headerLength = cursor.position - recordStart
                guard headerLength <= RecordLimits.mmkvMaximumHeaderLength else {
                    throw .recordHeaderTooLong(offset: recordStart, length: headerLength)
                }
                let location = RecordLocation(
                    start: recordStart, keyStart: keyStart, keyLength: keyLength,
                    valueStart: cursor.position, valueLength: valueLength)
                cursor.position += valueLength
                summary.recordCount += 1
                summary.validEnd = cursor.position
                visit(location)
            }
        } catch {
            summary.error = error
        }
        return summary
    }
}
