import Foundation

/// A value in an entry's user metadata: a string, an integer, a double, a date or bytes.
public enum MetadataValue: Sendable, Equatable, Hashable {
    /// A string.
    case string(String)
    /// A signed 64-bit integer.
    case int(Int64)
    /// A double.
    case double(Double)
    /// A point in time (stored as seconds since 1970, a `Double`).
    case date(Date)
    /// Bytes, stored as they are (not indexed: an index never takes its value from them).
    case bytes([UInt8])
}

extension MetadataValue: CustomStringConvertible {
    /// The value as text: dates in ISO 8601, bytes in base64.
    public var description: String {
        switch self {
        case .string(let text): text
        case .int(let number): String(number)
        case .double(let number): String(number)
        case .date(let date): date.formatted(.iso8601)
        case .bytes(let bytes): Data(bytes).base64EncodedString()
        }
    }
}
