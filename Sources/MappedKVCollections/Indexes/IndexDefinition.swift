import Foundation

/// The type of an index's values, which decides how they are compared.
public enum IndexType: String, Sendable, Codable, CaseIterable {
    /// Signed 64-bit integers.
    case int
    /// Doubles (NaN is never indexed).
    case double
    /// Strings, ordered by their UTF-8 bytes.
    case string
    /// Dates, to the millisecond.
    case date
}

/// Where an index takes each entry's value from.
public enum IndexSource: Sendable, Equatable, Hashable, CustomStringConvertible {
    /// A member path into the JSON value: `value.user.age` is `["user", "age"]`. The value's bytes
    /// are read as JSON, as the default serializer writes them.
    case valuePath([String])
    /// A metadata item: `meta.downloaded`.
    case metadata(String)
    /// The entry's creation time.
    case created
    /// The entry's modification time.
    case modified

    /// Parses `value.a.b`, `meta.name`, `created` or `modified`.
    public init?(_ text: String) {
        if text == "created" {
            self = .created
        } else if text == "modified" {
            self = .modified
        } else if text.hasPrefix("meta."), text.count > 5 {
            self = .metadata(String(text.dropFirst(5)))
        } else if text.hasPrefix("value.") {
            let path = text.dropFirst(6).split(separator: ".", omittingEmptySubsequences: false).map(String.init)
            guard !path.contains(where: \.isEmpty) else { return nil }
            self = .valuePath(path)
        } else {
            return nil
        }
    }

    /// The text form: `value.a.b`, `meta.name`, `created` or `modified`.
    public var description: String {
        switch self {
        case .valuePath(let path): "value." + path.joined(separator: ".")
        case .metadata(let name): "meta." + name
        case .created: "created"
        case .modified: "modified"
        }
    }
}

/// A secondary index of a bucket, as stored in the collection store so that every process and the
/// CLI see it.
public struct IndexDefinition: Sendable, Equatable, Hashable, Codable {
    /// The index's name, unique within its bucket.
    public var name: String
    /// The type of its values.
    public var type: IndexType
    /// Where each entry's value comes from.
    public var source: IndexSource
    /// Whether two entries may not have the same value.
    public var isUnique: Bool

    /// Creates a definition.
    public init(name: String, type: IndexType, source: IndexSource, isUnique: Bool = false) {
        self.name = name
        self.type = type
        self.source = source
        self.isUnique = isUnique
    }

    private enum CodingKeys: String, CodingKey { case name, type, source, unique }

    /// Decodes the stored JSON form.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        name = try container.decode(String.self, forKey: .name)
        type = try container.decode(IndexType.self, forKey: .type)
        let text = try container.decode(String.self, forKey: .source)
        guard let source = IndexSource(text) else {
            throw DecodingError.dataCorruptedError(
                forKey: .source, in: container, debugDescription: "bad source \(text)")
        }
        self.source = source
        isUnique = try container.decode(Bool.self, forKey: .unique)
    }

    /// Encodes the stored JSON form: `{"name", "type", "source", "unique"}`.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(name, forKey: .name)
        try container.encode(type, forKey: .type)
        try container.encode(source.description, forKey: .source)
        try container.encode(isUnique, forKey: .unique)
    }
}

/// A value of an index, or one to compare index values with.
public enum IndexValue: Sendable, Equatable, Hashable, CustomStringConvertible {
    /// An integer.
    case int(Int64)
    /// A double.
    case double(Double)
    /// A string.
    case string(String)
    /// A date.
    case date(Date)

    /// The value as text: dates in ISO 8601.
    public var description: String {
        switch self {
        case .int(let value): String(value)
        case .double(let value): String(value)
        case .string(let value): value
        case .date(let value): value.formatted(.iso8601)
        }
    }
}
