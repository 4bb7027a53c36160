import Foundation
import MappedKVFormat

// An entry record read in place (docs/FORMAT.md 11.2): the one parser of the format. It finds the
// times, one metadata item by name, and the value's bytes without allocating the metadata map or
// copying the value (what building the indexes at open reads from every entry), and
// `EntryRecord(decoding:)` is built on it. The invariant: every read stays inside the payload, and
// a payload that is not a whole record throws, with the reason.

/// The fields of a stored entry record, found in place.
struct EntryRecordView {
    let createdMilliseconds: Int64
    let modifiedMilliseconds: Int64
    /// The metadata items, as stored.
    private let items: UnsafeRawBufferPointer
    private let itemCount: Int
    /// The serialized value.
    let valueBytes: UnsafeRawBufferPointer

    /// The view of `payload`; throws why it is not an entry record.
    init(_ payload: UnsafeRawBufferPointer) throws(EntryRecordError) {
        var cursor = ByteCursor(payload)
        let version = payload.first ?? 0
        guard version == EntryRecord.version else {
            throw EntryRecordError(payload.isEmpty ? "no bytes" : "format version \(version)")
        }
        cursor.position = 1
        do throws(FormatError) {
            createdMilliseconds = EntryRecord.unzigzag(try cursor.readVarint64())
            modifiedMilliseconds = EntryRecord.unzigzag(try cursor.readVarint64())
            itemCount = try cursor.readLength()
        } catch {
            throw EntryRecordError("\(error)")
        }
        let start = cursor.position
        for _ in 0..<itemCount { _ = try Self.readItem(&cursor, decodingValue: false) }
        items = UnsafeRawBufferPointer(rebasing: payload[start..<cursor.position])
        valueBytes = UnsafeRawBufferPointer(rebasing: payload[cursor.position...])
    }

    /// Every metadata item, decoded (names and strings must be UTF-8).
    func metadata() throws(EntryRecordError) -> [String: MetadataValue] {
        var cursor = ByteCursor(items)
        var result: [String: MetadataValue] = [:]
        for _ in 0..<itemCount {
            let (name, value) = try Self.readItem(&cursor, decodingValue: true)
            guard let text = String(validating: name, as: UTF8.self), let value else {
                throw EntryRecordError("a metadata name is not UTF-8")
            }
            result[text] = value
        }
        return result
    }

    /// The metadata item `name`, if the record has one; only that item's value is decoded.
    func metadataValue(named name: String) -> MetadataValue? {
        var cursor = ByteCursor(items)
        for _ in 0..<itemCount {
            let start = cursor.position
            guard let (stored, _) = try? Self.readItem(&cursor, decodingValue: false) else { return nil }
            if stored.elementsEqual(name.utf8) {
                cursor.position = start
                return (try? Self.readItem(&cursor, decodingValue: true))?.value
            }
        }
        return nil
    }

    /// Reads one item: its name's bytes and, with `decodingValue`, its value (else skipped).
    private static func readItem(
        _ cursor: inout ByteCursor, decodingValue: Bool
    ) throws(EntryRecordError) -> (name: UnsafeRawBufferPointer, value: MetadataValue?) {
        do throws(FormatError) {
            let name = try cursor.readBytes(try cursor.readLength())
            let tag = try cursor.readLittleEndian(UInt8.self)
            switch tag {
            case 1:
                let bytes = try cursor.readBytes(try cursor.readLength())
                guard decodingValue else { return (name, nil) }
                guard let text = String(validating: bytes, as: UTF8.self) else { throw FormatError.invalidUTF8 }
                return (name, .string(text))
            case 2:
                let raw = try cursor.readVarint64()
                return (name, decodingValue ? .int(EntryRecord.unzigzag(raw)) : nil)
            case 3, 4:
                let bits = try cursor.readLittleEndian(UInt64.self)
                guard decodingValue else { return (name, nil) }
                let number = Double(bitPattern: bits)
                return (name, tag == 3 ? .double(number) : .date(Date(timeIntervalSince1970: number)))
            case 5:
                let bytes = try cursor.readBytes(try cursor.readLength())
                return (name, decodingValue ? .bytes(Array(bytes)) : nil)
            default:
                throw FormatError.payloadMismatch(expected: "a metadata tag (1 to 5)", found: "tag \(tag)")
            }
        } catch {
            throw EntryRecordError("\(error)")
        }
    }
}
