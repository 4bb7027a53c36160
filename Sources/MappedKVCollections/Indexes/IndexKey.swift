// The value types an index orders by, and how a public `IndexValue` becomes one. The invariant: a
// value converts only to the key type of an index of its type (a date to milliseconds for a date
// index, an integral double to an integer for an int index, never NaN to a double), and each type's
// order is the one queries promise: numbers by value, strings by their UTF-8 bytes.

/// A value type an index orders by.
protocol IndexKey: Comparable {
    /// The key for `value` of an index of `type`, or nil if the value cannot be one.
    init?(_ value: IndexValue, type: IndexType)
    /// The value as the public type.
    func indexValue(type: IndexType) -> IndexValue
    /// A value stored for IDs that have none (never read: `present` says which IDs have one).
    static var placeholder: Self { get }
}

extension Int64: IndexKey {
    init?(_ value: IndexValue, type: IndexType) {
        switch (value, type) {
        case (.int(let number), .int): self = number
        case (.double(let number), .int):
            guard let exact = Int64(exactly: number) else { return nil }
            self = exact
        case (.date(let date), .date): self = EntryRecord.milliseconds(date)
        case (.int(let milliseconds), .date): self = milliseconds
        default: return nil
        }
    }

    func indexValue(type: IndexType) -> IndexValue { type == .date ? .date(EntryRecord.date(self)) : .int(self) }

    static var placeholder: Int64 { 0 }
}

extension Double: IndexKey {
    init?(_ value: IndexValue, type: IndexType) {
        switch value {
        case .double(let number) where !number.isNaN: self = number
        case .int(let number): self = Double(number)
        default: return nil
        }
    }

    func indexValue(type: IndexType) -> IndexValue { .double(self) }

    static var placeholder: Double { 0 }
}

/// A string ordered by its UTF-8 bytes (not by Unicode canonical order), the order the CLI and
/// every process agree on.
struct UTF8Key: IndexKey {
    var string: String

    init(_ string: String) { self.string = string }

    init?(_ value: IndexValue, type: IndexType) {
        guard case .string(let text) = value else { return nil }
        string = text
    }

    func indexValue(type: IndexType) -> IndexValue { .string(string) }

    static var placeholder: UTF8Key { UTF8Key("") }

    static func < (lhs: UTF8Key, rhs: UTF8Key) -> Bool { lhs.string.utf8.lexicographicallyPrecedes(rhs.string.utf8) }
    static func == (lhs: UTF8Key, rhs: UTF8Key) -> Bool { lhs.string.utf8.elementsEqual(rhs.string.utf8) }
}
