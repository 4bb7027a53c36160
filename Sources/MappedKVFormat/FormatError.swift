/// A reason why bytes could not be read as MMKV data.
public enum FormatError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The input ended in the middle of an item that starts at `offset`.
    case truncated(offset: Int)
    /// A varint at `offset` is longer than 10 bytes.
    case malformedVarint(offset: Int)
    /// A length at `offset` is negative when read as an Int32, or points past the end.
    case invalidLength(offset: Int, length: UInt64)
    /// A record key at `offset` is longer than MMKV's reader accepts.
    case keyTooLong(offset: Int, length: Int)
    /// A record header at `offset` spans more bytes than MMKV's reader accepts.
    case recordHeaderTooLong(offset: Int, length: Int)
    /// A meta file is shorter than the 112-byte meta struct.
    case metaTooShort(length: Int)
    /// A string payload is not valid UTF-8.
    case invalidUTF8
    /// A payload is empty where the type needs at least one byte.
    case emptyPayload
    /// A payload's bytes are not an encoding of the requested type (docs/FORMAT.md 2.5): the key holds a
    /// value of another type. `expected` names the type and its encoding, `found` what the bytes are.
    case payloadMismatch(expected: String, found: String)

    /// What is wrong with the bytes and at which offset.
    public var description: String {
        switch self {
        case .truncated(let offset): "data ends inside the item at offset \(offset)"
        case .malformedVarint(let offset): "malformed varint at offset \(offset)"
        case .invalidLength(let offset, let length): "invalid length \(length) at offset \(offset)"
        case .keyTooLong(let offset, let length): "key of \(length) bytes at offset \(offset) exceeds MMKV's limit"
        case .recordHeaderTooLong(let offset, let length):
            "record header of \(length) bytes at offset \(offset) exceeds MMKV's limit"
        case .metaTooShort(let length): "meta file holds \(length) bytes, needs \(MetaInfo.size)"
        case .invalidUTF8: "string payload is not valid UTF-8"
        case .emptyPayload: "payload is empty"
        case .payloadMismatch(let expected, let found):
            "payload is not \(expected): found \(found); the key holds a value of another type"
        }
    }
}
