import Foundation
import MappedKVFormat

// An entry record read in place (docs/FORMAT.md 11.2): the times, one metadata item by name, and
// the value's bytes, without allocating the metadata map or copying the value. What building the
// indexes at open reads from every entry. The invariant: every read stays inside the payload, and
// a payload that is not a record gives no view.

/// The fields of a stored entry record, found in place.
struct EntryRecordView {
    let createdMilliseconds: Int64
    let modifiedMilliseconds: Int64
    /// The metadata items, as stored.
    private let metadata: UnsafeRawBufferPointer
    private let metadataCount: Int
    /// The serialized value.
    let valueBytes: UnsafeRawBufferPointer

    /// The view of `payload`, or nil if it is not an entry record.
    init?(_ payload: UnsafeRawBufferPointer) {
        var cursor = ByteCursor(payload)
        guard (try? cursor.readLittleEndian(UInt8.self)) == EntryRecord.version,
            let created = try? cursor.readVarint64(), let modified = try? cursor.readVarint64(),
            let count = try? cursor.readLength()
        else { return nil }
        createdMilliseconds = EntryRecord.unzigzag(created)
        modifiedMilliseconds = EntryRecord.unzigzag(modified)
        let start = cursor.position
        for _ in 0..<count {
            guard let nameLength = try? cursor.readLength(), (try? cursor.readBytes(nameLength)) != nil,
                Self.skipValue(&cursor)
            else { return nil }
        }
        metadata = UnsafeRawBufferPointer(rebasing: payload[start..<cursor.position])
        metadataCount = count
        valueBytes = UnsafeRawBufferPointer(rebasing: payload[cursor.position...])
    }

    /// The metadata item `name`, if the record has one.
    func metadataValue(named name: String) -> MetadataValue? {
        var cursor = ByteCursor(metadata)
        for _ in 0..<metadataCount {
            guard let nameLength = try? cursor.readLength(), let stored = try? cursor.readBytes(nameLength) else {
                return nil
            }
            guard stored.elementsEqual(name.utf8) else {
                guard Self.skipValue(&cursor) else { return nil }
                continue
            }
            guard let tag = try? cursor.readLittleEndian(UInt8.self) else { return nil }
            switch tag {
            case 1:
                guard let length = try? cursor.readLength(), let bytes = try? cursor.readBytes(length) else {
                    return nil
                }
                return .string(String(decoding: bytes, as: UTF8.self))
            case 2: return (try? cursor.readVarint64()).map { .int(EntryRecord.unzigzag($0)) }
            case 3: return (try? cursor.readLittleEndian(UInt64.self)).map { .double(Double(bitPattern: $0)) }
            case 4:
                return (try? cursor.readLittleEndian(UInt64.self)).map {
                    .date(Date(timeIntervalSince1970: Double(bitPattern: $0)))
                }
            default: return nil
            }
        }
        return nil
    }

    /// Skips one tagged metadata value; false if it is malformed.
    private static func skipValue(_ cursor: inout ByteCursor) -> Bool {
        guard let tag = try? cursor.readLittleEndian(UInt8.self) else { return false }
        switch tag {
        case 1:
            guard let length = try? cursor.readLength() else { return false }
            return (try? cursor.readBytes(length)) != nil
        case 2: return (try? cursor.readVarint64()) != nil
        case 3, 4: return (try? cursor.readLittleEndian(UInt64.self)) != nil
        default: return false
        }
    }
}
