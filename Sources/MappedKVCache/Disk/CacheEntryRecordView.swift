import MappedKVFormat

// The parser of a manifest record (layout in CacheEntryRecord.swift), with the read path's
// shortcut for a live inline value beside it (a test holds the two to the same verdicts). It
// reads the fixed fields and locates the variable ones where the record lies, copying nothing, so
// that a read of an inline value copies the value once, into the array it returns, and checks it
// in place.
// The invariant: a view exists only for a well-formed record of this version; its ranges lie
// within the bytes it was made from, and an inline record's value range is exactly `size` bytes.

/// The fields of a manifest record, read in place: numbers decoded, byte runs located.
struct CacheEntryRecordView {
    /// The value's length in bytes.
    let size: Int
    /// CRC-32 (zlib) of the value's plain bytes.
    let crc: UInt32
    /// When the value was set, in milliseconds since 1970.
    let modified: UInt64
    /// When it expires, in milliseconds since 1970, or nil.
    let expiry: UInt64?
    /// Where the caller's extended data lies in the record, if it has any.
    let extendedData: Range<Int>?
    /// Whether the value is in the record (else in a file).
    let isInline: Bool
    /// Where the inline value, or the file's name, lies in the record.
    let payload: Range<Int>

    /// Parses the record in `raw`; nil for anything that is not a well-formed record of this
    /// version. A file record's name is not checked here (see ``FileNames/isValid(_:)``).
    init?(_ raw: UnsafeRawBufferPointer) {
        guard raw.count >= 2, raw[0] == CacheEntryRecord.version else { return nil }
        let flags = raw[1]
        guard flags & ~7 == 0 else { return nil }
        var cursor = ByteCursor(raw, position: 2)
        do {
            let size = try cursor.readVarint64()
            guard size <= UInt64(Int32.max), cursor.remaining >= 4 else { return nil }
            crc = UInt32(littleEndian: raw.loadUnaligned(fromByteOffset: cursor.position, as: UInt32.self))
            cursor.position += 4
            modified = try cursor.readVarint64()
            expiry = flags & 2 != 0 ? try cursor.readVarint64() : nil
            if flags & 4 != 0 {
                let length = try cursor.readVarint64()
                guard length <= UInt64(cursor.remaining) else { return nil }
                extendedData = cursor.position..<cursor.position + Int(length)
                cursor.position += Int(length)
            } else {
                extendedData = nil
            }
            isInline = flags & 1 != 0
            if isInline {
                guard cursor.remaining == Int(size) else { return nil }
            } else {
                let length = try cursor.readVarint64()
                guard length == UInt64(cursor.remaining), length > 0 else { return nil }
            }
            self.size = Int(size)
            payload = cursor.position..<raw.count
        } catch {
            return nil
        }
    }

    /// Where a live inline value lies in `raw` and the CRC-32 recorded for it; nil for anything
    /// else (a file record, an expired entry, a record that is not well formed).
    ///
    /// The read path's shortcut for the steady state: it decodes only the fields that decide
    /// (`size`, `crc`, `expiry`) and skips the rest, cheaper than building a view (the cache
    /// bench's disk_get). Whatever it accepts, ``init(_:)`` accepts too.
    static func liveInlineValue(
        in raw: UnsafeRawBufferPointer, at now: UInt64
    ) -> (value: UnsafeRawBufferPointer, crc: UInt32)? {
        // version, flags, a 1-byte size at least and the CRC.
        guard raw.count >= 7, raw[0] == CacheEntryRecord.version else { return nil }
        let flags = raw[1]
        // Inline (bit 0 set), and no other bit set but expiry (bit 1) and extended data (bit 2).
        guard flags & ~6 == 1 else { return nil }
        var cursor = ByteCursor(raw, position: 2)
        guard let size = try? cursor.readVarint64(), cursor.remaining >= 4 else { return nil }
        let crc = UInt32(littleEndian: raw.loadUnaligned(fromByteOffset: cursor.position, as: UInt32.self))
        cursor.position += 4
        guard (try? cursor.readVarint64()) != nil else { return nil }  // modified
        if flags & 2 != 0 {
            guard let expiry = try? cursor.readVarint64(), expiry > now else { return nil }
        }
        if flags & 4 != 0 {
            guard let length = try? cursor.readVarint64(), length <= UInt64(cursor.remaining) else { return nil }
            cursor.position += Int(length)
        }
        let position = cursor.position
        guard UInt64(raw.count - position) == size else { return nil }
        return (UnsafeRawBufferPointer(rebasing: raw[position...]), crc)
    }

    /// Whether the entry has expired at `now` (milliseconds since 1970).
    func isExpired(at now: UInt64) -> Bool { expiry.map { $0 <= now } ?? false }

    /// The extended data's bytes copied out of `raw` (the bytes the view was made from), if any.
    func extendedDataBytes(in raw: UnsafeRawBufferPointer) -> [UInt8]? {
        extendedData.map { Array(UnsafeRawBufferPointer(rebasing: raw[$0])) }
    }

    /// The file's name, for a file record whose name is one this cache makes; nil otherwise.
    func fileName(in raw: UnsafeRawBufferPointer) -> String? {
        guard !isInline else { return nil }
        let name = String(decoding: UnsafeRawBufferPointer(rebasing: raw[payload]), as: UTF8.self)
        return FileNames.isValid(name) ? name : nil
    }

    /// The inline value copied out of `raw` if its CRC is the recorded one (checked before the
    /// copy); nil for a file record or a value that is not the one recorded.
    func intactInlineValue(in raw: UnsafeRawBufferPointer) -> [UInt8]? {
        guard isInline else { return nil }
        let value = UnsafeRawBufferPointer(rebasing: raw[payload])
        guard CRC32.update(0, value) == crc else { return nil }
        return Array(value)
    }
}
