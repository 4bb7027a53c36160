import Foundation

/// One condition of a query, on an index of the bucket.
public enum QueryCondition: Sendable, Equatable {
    /// The index's value equals the value.
    case equal(String, IndexValue)
    /// The index's value differs from the value. As in SQL, an entry with no value for the index
    /// (or a value not of the index's type) does not meet it: it is the complement of ``equal(_:_:)``
    /// among the entries the index holds, not among all entries.
    case notEqual(String, IndexValue)
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
        case .equal(let name, _), .notEqual(let name, _), .less(let name, _), .lessOrEqual(let name, _),
            .greater(let name, _),
            .greaterOrEqual(let name, _), .prefix(let name, _), .oneOf(let name, _):
            name
        }
    }
}

/// A query over a bucket's entries: which entries (an OR of groups of conditions, each group an
/// AND), an order, and a page.
///
/// ``init(where:orderBy:descending:limit:after:)`` makes a query of one group, whose conditions must
/// all hold; ``init(anyOf:orderBy:descending:limit:after:)`` makes one of several groups, of which an
/// entry must meet at least one. The order, the limit, the cursor and counts work the same either way:
/// each entry matched is in the results once, at its place in the order (ties by key), however many
/// groups it meets.
public struct Query: Sendable, Equatable {
    /// The groups of conditions: an entry is selected if it meets every condition of at least one
    /// group. An empty group is met by every entry; no group at all is met by none.
    public var groups: [[QueryCondition]]
    /// The index to order by, or nil to order by key. Entries with no value for it are left out.
    public var order: String?
    /// Whether the order is descending.
    public var descending: Bool
    /// The most entries to return, or nil for all.
    public var limit: Int?
    /// Where the previous page ended (its ``QueryPage/cursor``), to continue after it.
    public var after: QueryCursor?

    /// The conditions of a query of one group, all of which an entry must meet (empty for a query
    /// of several groups or none). Setting it makes the query one group of these conditions.
    public var conditions: [QueryCondition] {
        get { groups.count == 1 ? groups[0] : [] }
        set { groups = [newValue] }
    }

    /// Creates a query of one group: the entries meeting every condition of `conditions`.
    public init(
        where conditions: [QueryCondition] = [], orderBy order: String? = nil, descending: Bool = false,
        limit: Int? = nil, after: QueryCursor? = nil
    ) {
        self.init(anyOf: [conditions], orderBy: order, descending: descending, limit: limit, after: after)
    }

    /// Creates a query of several groups: the entries meeting every condition of at least one group.
    ///
    /// ```swift
    /// // likes > 100 OR (author = "ada" AND created >= start), newest first
    /// let page = try posts.query(
    ///     Query(anyOf: [[.greater("likes", .int(100))],
    ///                   [.equal("author", .string("ada")), .greaterOrEqual("created", .date(start))]],
    ///           orderBy: "created", descending: true, limit: 20))
    /// ```
    public init(
        anyOf groups: [[QueryCondition]], orderBy order: String? = nil, descending: Bool = false,
        limit: Int? = nil, after: QueryCursor? = nil
    ) {
        self.groups = groups
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
