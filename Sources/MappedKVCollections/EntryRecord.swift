import Foundation
import MappedKVFormat

// The stored form of one bucket entry (docs/FORMAT.md 11.2): the value, its metadata and its times in
// one payload, so one record, so that a reader in any process sees all of them or none. The
// invariant: `decode(encode(x)) == x` for every record, and decoding never reads past the payload.
//
//     byte     format version (1)
//     varint   created, milliseconds since 1970, zigzag
//     varint   modified, milliseconds since 1970, zigzag
//     varint   metadata count; per item, sorted by name:
//                varint name length, name (UTF-8), tag byte (1 string, 2 int, 3 double, 4 date,
//                5 bytes), then: string = varint length + UTF-8; int = zigzag varint;
//                double and date = 8 bytes little-endian IEEE 754 (date: seconds since 1970);
//                bytes = varint length + the bytes
//     bytes    the serialized value, to the end of the payload

/// An entry as stored: times, metadata and the serializer's bytes.
struct EntryRecord: Equatable, Sendable, PayloadCodable {
    /// The format version this module writes.
    static let version: UInt8 = 1

    var createdMilliseconds: Int64
    var modifiedMilliseconds: Int64
    var metadata: [String: MetadataValue]
    var valueBytes: [UInt8]

    /// The record's payload bytes.
    func encoded() -> [UInt8] {
        var bytes: [UInt8] = []
        encodePayload(into: &bytes)
        return bytes
    }

    /// Appends the record's payload bytes to `bytes`: a put hands the record to the store, which
    /// encodes it straight into its record buffer.
    func encodePayload(into bytes: inout [UInt8]) {
        // Times and a short metadata map fit in the first 64 bytes: the value is appended without growing.
        bytes.reserveCapacity(bytes.count + 64 + valueBytes.count)
        bytes.append(Self.version)
        Varint.append(Self.zigzag(createdMilliseconds), to: &bytes)
        Varint.append(Self.zigzag(modifiedMilliseconds), to: &bytes)
        Varint.append(UInt64(metadata.count), to: &bytes)
        for (name, value) in metadata.isEmpty
            ? [] : metadata.sorted(by: { $0.key.utf8.lexicographicallyPrecedes($1.key.utf8) })
        {
            Varint.append(UInt64(name.utf8.count), to: &bytes)
            bytes.append(contentsOf: name.utf8)
            switch value {
            case .string(let text):
                bytes.append(1)
                Varint.append(UInt64(text.utf8.count), to: &bytes)
                bytes.append(contentsOf: text.utf8)
            case .int(let number):
                bytes.append(2)
                Varint.append(Self.zigzag(number), to: &bytes)
            case .double(let number):
                bytes.append(3)
                withUnsafeBytes(of: number.bitPattern.littleEndian) { bytes.append(contentsOf: $0) }
            case .date(let date):
                bytes.append(4)
                withUnsafeBytes(of: date.timeIntervalSince1970.bitPattern.littleEndian) { bytes.append(contentsOf: $0) }
            case .bytes(let value):
                bytes.append(5)
                Varint.append(UInt64(value.count), to: &bytes)
                bytes.append(contentsOf: value)
            }
        }
        bytes.append(contentsOf: valueBytes)
    }

    /// The payload's length when the record has no metadata (the common put, which the store then
    /// writes in place with ``writePayload(to:)``); nil otherwise, when the record is encoded.
    var directPayloadLength: Int? {
        guard metadata.isEmpty else { return nil }
        return 1 + Varint.size(of: Self.zigzag(createdMilliseconds))
            + Varint.size(of: Self.zigzag(modifiedMilliseconds))
            + 1 + valueBytes.count
    }

    /// Writes the payload of a record without metadata at `destination` (``directPayloadLength``
    /// bytes); a record with metadata is encoded and copied.
    func writePayload(to destination: UnsafeMutableRawPointer) {
        guard metadata.isEmpty else {
            encoded().withUnsafeBytes { bytes in
                guard let source = bytes.baseAddress else { return }
                destination.copyMemory(from: source, byteCount: bytes.count)
            }
            return
        }
        destination.storeBytes(of: Self.version, as: UInt8.self)
        var offset = 1
        offset += Varint.write(Self.zigzag(createdMilliseconds), to: destination + offset)
        offset += Varint.write(Self.zigzag(modifiedMilliseconds), to: destination + offset)
        (destination + offset).storeBytes(of: 0, as: UInt8.self)  // no metadata items
        offset += 1
        valueBytes.withUnsafeBytes { value in
            guard let source = value.baseAddress else { return }
            (destination + offset).copyMemory(from: source, byteCount: value.count)
        }
    }

    /// Decodes a record; throws a reason for bytes that are not one.
    init(decoding payload: UnsafeRawBufferPointer) throws(EntryRecordError) {
        try self.init(try EntryRecordView(payload))
    }

    /// Decodes a record (the store's face of ``init(decoding:)``).
    init(payload: UnsafeRawBufferPointer) throws(FormatError) {
        do {
            try self.init(decoding: payload)
        } catch {
            throw .payloadMismatch(expected: "an entry record", found: error.description)
        }
    }

    /// The record a view reads, decoded.
    init(_ view: EntryRecordView) throws(EntryRecordError) {
        createdMilliseconds = view.createdMilliseconds
        modifiedMilliseconds = view.modifiedMilliseconds
        metadata = try view.metadata()
        valueBytes = Array(view.valueBytes)
    }

    init(
        createdMilliseconds: Int64, modifiedMilliseconds: Int64, metadata: [String: MetadataValue], valueBytes: [UInt8]
    ) {
        self.createdMilliseconds = createdMilliseconds
        self.modifiedMilliseconds = modifiedMilliseconds
        self.metadata = metadata
        self.valueBytes = valueBytes
    }

    static func zigzag(_ value: Int64) -> UInt64 { UInt64(bitPattern: (value << 1) ^ (value >> 63)) }
    static func unzigzag(_ value: UInt64) -> Int64 { Int64(bitPattern: value >> 1) ^ -Int64(bitPattern: value & 1) }

    /// Milliseconds since 1970 of `date`, clamped to the `Int64` range.
    static func milliseconds(_ date: Date) -> Int64 {
        let value = (date.timeIntervalSince1970 * 1000).rounded()
        guard value.isFinite else { return 0 }
        return value >= 9.2e18 ? .max : value <= -9.2e18 ? .min : Int64(value)
    }

    /// The date of `milliseconds` since 1970.
    static func date(_ milliseconds: Int64) -> Date { Date(timeIntervalSince1970: Double(milliseconds) / 1000) }
}

/// Why stored bytes are not an entry record.
struct EntryRecordError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
