import MappedKVFormat

/// One entry of a disk cache's manifest, as stored under the key `e:<cache key>`. Pure: encoding
/// and decoding only.
///
/// Layout (varints are protobuf varints, integers little-endian):
///
/// | field | bytes | meaning |
/// |---|---|---|
/// | version | 1 | 1 |
/// | flags | 1 | bit 0: the value is inline; bit 1: an expiry follows; bit 2: extended data follows |
/// | size | varint | the value's length in bytes |
/// | crc | 4 | CRC-32 (zlib) of the value's plain bytes |
/// | modified | varint | milliseconds since 1970 |
/// | expiry | varint | milliseconds since 1970, if flag bit 1 |
/// | extended | varint length + bytes | the caller's extended data, if flag bit 2 |
/// | value or file | the rest | inline: exactly `size` bytes; else varint length + the file's name |
///
/// The CRC lets a reader refuse a value that is not the one recorded: a missing, short or
/// changed file, or a manifest entry that was itself damaged, is a miss, never wrong bytes.
struct CacheEntryRecord: Equatable, Sendable {
    /// Where the value's bytes are.
    enum Location: Equatable, Sendable {
        /// In the record itself.
        case inline([UInt8])
        /// In `files/<name>` under the cache directory.
        case file(name: String)

        /// Whether the value is in the record.
        var isInline: Bool {
            if case .inline = self { return true }
            return false
        }
    }

    static let version: UInt8 = 1

    var size: Int
    var crc: UInt32
    var modified: UInt64
    var expiry: UInt64?
    var extendedData: [UInt8]?
    var location: Location

    /// The file's name, for a value stored in a file.
    var fileName: String? {
        if case .file(let name) = location { return name }
        return nil
    }

    /// The inline value if it has the recorded size and CRC; nil for a damaged one or a file record.
    var intactInlineValue: [UInt8]? {
        guard case .inline(let value) = location, value.count == size,
            value.withUnsafeBytes({ CRC32.update(0, $0) }) == crc
        else { return nil }
        return value
    }

    /// Whether the entry has expired at `now` (milliseconds since 1970).
    func isExpired(at now: UInt64) -> Bool { expiry.map { $0 <= now } ?? false }

    /// The record's bytes.
    var encoded: [UInt8] {
        [UInt8](unsafeUninitializedCapacity: encodedLength) { buffer, count in
            count = encode(into: UnsafeMutableRawBufferPointer(buffer))
        }
    }

    /// The length of ``encoded``.
    var encodedLength: Int {
        let payload =
            switch location {
            case .inline(let value): value.count
            case .file(let name): Varint.size(of: UInt64(name.utf8.count)) + name.utf8.count
            }
        return Self.headerLength(size: size, modified: modified, expiry: expiry, extendedData: extendedData) + payload
    }

    /// Writes ``encoded`` to the start of `buffer` (at least ``encodedLength`` bytes) and returns
    /// its length: written in place, so a set builds no array for the record (appending field by
    /// field to one slows the cache bench's disk_set).
    func encode(into buffer: UnsafeMutableRawBufferPointer) -> Int {
        guard let base = buffer.baseAddress else { return 0 }
        var position = Self.writeHeader(
            size: size, crc: crc, modified: modified, expiry: expiry, extendedData: extendedData,
            isInline: location.isInline, to: base)
        switch location {
        case .inline(let value):
            position += Self.copy(value, to: base + position)
        case .file(let name):
            let utf8 = Array(name.utf8)
            position += Varint.write(UInt64(utf8.count), to: base + position)
            position += Self.copy(utf8, to: base + position)
        }
        return position
    }

    /// The length of the record of an inline value of `size` bytes: ``encodedLength`` without a
    /// record to ask.
    static func inlineLength(size: Int, modified: UInt64, expiry: UInt64?, extendedData: [UInt8]?) -> Int {
        headerLength(size: size, modified: modified, expiry: expiry, extendedData: extendedData) + size
    }

    /// Writes the record of the inline `value` to the start of `buffer` (at least
    /// ``inlineLength(size:modified:expiry:extendedData:)`` bytes) and returns its length: what
    /// ``encode(into:)`` writes for it, without a record built first (making one, and the copies
    /// the set's closures took of it, slow the cache bench's disk_set).
    static func encodeInline(
        _ value: UnsafeRawBufferPointer, crc: UInt32, modified: UInt64, expiry: UInt64?, extendedData: [UInt8]?,
        into buffer: UnsafeMutableRawBufferPointer
    ) -> Int {
        guard let base = buffer.baseAddress else { return 0 }
        let position = writeHeader(
            size: value.count, crc: crc, modified: modified, expiry: expiry, extendedData: extendedData,
            isInline: true, to: base)
        if let source = value.baseAddress { (base + position).copyMemory(from: source, byteCount: value.count) }
        return position + value.count
    }

    /// The bytes before the value or the file's name.
    private static func headerLength(size: Int, modified: UInt64, expiry: UInt64?, extendedData: [UInt8]?) -> Int {
        var length = 2 + Varint.size(of: UInt64(size)) + 4 + Varint.size(of: modified)
        if let expiry { length += Varint.size(of: expiry) }
        if let extendedData { length += Varint.size(of: UInt64(extendedData.count)) + extendedData.count }
        return length
    }

    /// Writes the bytes before the value or the file's name at `base`; returns their count.
    private static func writeHeader(
        size: Int, crc: UInt32, modified: UInt64, expiry: UInt64?, extendedData: [UInt8]?, isInline: Bool,
        to base: UnsafeMutableRawPointer
    ) -> Int {
        var flags: UInt8 = isInline ? 1 : 0
        var position = 2
        position += Varint.write(UInt64(size), to: base + position)
        base.storeBytes(of: crc.littleEndian, toByteOffset: position, as: UInt32.self)
        position += 4
        position += Varint.write(modified, to: base + position)
        if let expiry {
            flags |= 2
            position += Varint.write(expiry, to: base + position)
        }
        if let extendedData {
            flags |= 4
            position += Varint.write(UInt64(extendedData.count), to: base + position)
            position += copy(extendedData, to: base + position)
        }
        base.storeBytes(of: version, toByteOffset: 0, as: UInt8.self)
        base.storeBytes(of: flags, toByteOffset: 1, as: UInt8.self)
        return position
    }

    /// Copies `bytes` to `destination`; returns their count.
    private static func copy(_ bytes: [UInt8], to destination: UnsafeMutableRawPointer) -> Int {
        bytes.withUnsafeBytes { source in
            if let address = source.baseAddress { destination.copyMemory(from: address, byteCount: source.count) }
        }
        return bytes.count
    }

    /// Decodes a record; nil for anything that is not a well-formed record of this version.
    init?(decoding bytes: [UInt8]) {
        guard let record = bytes.withUnsafeBytes({ Self.decode($0) }) else { return nil }
        self = record
    }

    init(size: Int, crc: UInt32, modified: UInt64, expiry: UInt64?, extendedData: [UInt8]?, location: Location) {
        self.size = size
        self.crc = crc
        self.modified = modified
        self.expiry = expiry
        self.extendedData = extendedData
        self.location = location
    }

    /// The size of the value and the name of its file (nil for an inline value) of the record in
    /// `raw`, without copying the value; nil if `raw` is not a well-formed record.
    static func summary(of raw: UnsafeRawBufferPointer) -> (size: Int, fileName: String?)? {
        guard let view = CacheEntryRecordView(raw) else { return nil }
        if view.isInline { return (view.size, nil) }
        return view.fileName(in: raw).map { (view.size, $0) }
    }

    /// Decodes the record in `raw`; nil for anything that is not a well-formed record of this version.
    static func decode(_ raw: UnsafeRawBufferPointer) -> CacheEntryRecord? {
        guard let view = CacheEntryRecordView(raw) else { return nil }
        let location: Location
        if view.isInline {
            location = .inline(Array(UnsafeRawBufferPointer(rebasing: raw[view.payload])))
        } else {
            guard let name = view.fileName(in: raw) else { return nil }
            location = .file(name: name)
        }
        return CacheEntryRecord(
            size: view.size, crc: view.crc, modified: view.modified, expiry: view.expiry,
            extendedData: view.extendedDataBytes(in: raw), location: location)
    }
}

/// The names of value and temporary files: 32 lowercase hex digits of random bytes, so a name
/// read from a damaged manifest can never point outside `files/`.
enum FileNames {
    /// A fresh random name.
    static func random() -> String {
        var generator = SystemRandomNumberGenerator()
        let high = generator.next() as UInt64
        let low = generator.next() as UInt64
        return hex(high) + hex(low)
    }

    private static func hex(_ value: UInt64) -> String {
        let digits = String(value, radix: 16)
        return String(repeating: "0", count: 16 - digits.count) + digits
    }

    /// Whether `name` is one this cache makes.
    static func isValid(_ name: String) -> Bool {
        name.utf8.count == 32 && name.utf8.allSatisfy { (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }
    }
}
