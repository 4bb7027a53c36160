import Foundation

/// One condition of a query, on an index of the bucket.
public enum QueryCondition: Sendable, Equatable {
    /// The index's value equals the value.
    case equal(String, IndexValue)
    /// The index's value is below the value.
    case less(String, IndexValue)
    /// The index's value is at most the value.
    case lessOrEqual(String, IndexValue)
    /// The index's value is above the value.
    case greater(String, IndexValue)
    /// The index's value is at least the value.
    case greaterOrEqual(String, IndexValue)
    /// The index's string value starts with the text.
    case prefix(String, String)
    /// The index's value is one of the values.
    case oneOf(String, [IndexValue])

    /// The index the condition is on.
    public var indexName: String {
        switch self {
        case .equal(let name, _), .less(let name, _), .lessOrEqual(let name, _), .greater(let name, _),
            .greaterOrEqual(let name, _), .prefix(let name, _), .oneOf(let name, _):
            name
        }
    }
}

/// A query over a bucket's entries: conditions that must all hold, an order, and a page.
public struct Query: Sendable, Equatable {
    /// The conditions, all of which an entry must meet.
    public var conditions: [QueryCondition]
    /// The index to order by, or nil to order by key. Entries with no value for it are left out.
    public var order: String?
    /// Whether the order is descending.
    public var descending: Bool
    /// The most entries to return, or nil for all.
    public var limit: Int?
    /// Where the previous page ended (its ``QueryPage/cursor``), to continue after it.
    public var after: QueryCursor?

    /// Creates a query.
    public init(
        where conditions: [QueryCondition] = [], orderBy order: String? = nil, descending: Bool = false,
        limit: Int? = nil, after: QueryCursor? = nil
    ) {
        self.conditions = conditions
        self.order = order
        self.descending = descending
        self.limit = limit
        self.after = after
    }
}

/// Where a page of results ended: pass it as ``Query/after`` to get the next page. It names the
/// last entry's position (its ordering value and key), not an offset, so the next page is right
/// even if entries were added or removed before it.
public struct QueryCursor: Sendable, Equatable, Hashable, CustomStringConvertible {
    /// The last entry's value of the ordering index (nil when ordered by key).
    var value: IndexValue?
    /// The last entry's key.
    var key: String

    /// The opaque text form, for the command line and for clients.
    public var description: String {
        var object: [String: String] = ["k": key]
        if let value { object["v"] = Self.encode(value) }
        let data = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data()
        return data.base64EncodedString()
    }

    /// Parses the text form; nil if it is not one.
    public init?(_ text: String) {
        guard let data = Data(base64Encoded: text),
            let object = try? JSONSerialization.jsonObject(with: data) as? [String: String], let key = object["k"]
        else { return nil }
        self.key = key
        if let encoded = object["v"] {
            guard let value = Self.decode(encoded) else { return nil }
            self.value = value
        }
    }

    init(value: IndexValue?, key: String) {
        self.value = value
        self.key = key
    }

    private static func encode(_ value: IndexValue) -> String {
        switch value {
        case .int(let number): "i" + String(number)
        case .double(let number): "d" + String(number.bitPattern)
        case .string(let text): "s" + text
        case .date(let date): "t" + String(EntryRecord.milliseconds(date))
        }
    }

    private static func decode(_ text: String) -> IndexValue? {
        let body = String(text.dropFirst())
        switch text.first {
        case "i": return Int64(body).map(IndexValue.int)
        case "d": return UInt64(body).map { .double(Double(bitPattern: $0)) }
        case "s": return .string(body)
        case "t": return Int64(body).map { .date(EntryRecord.date($0)) }
        default: return nil
        }
    }
}

/// One page of a query's results.
public struct QueryPage<Value> {
    /// The entries, in the query's order.
    public var entries: [Entry<Value>]
    /// Where to continue, or nil when no more entries match.
    public var cursor: QueryCursor?
}

extension QueryPage: Sendable where Value: Sendable {}
