import Foundation

// The value an index takes from one entry record: from the JSON value, a metadata item, or the
// entry's times. The invariant: a value that does not fit the index's type is no value (the entry
// is left out of that index), never a converted guess.
enum IndexExtraction {
    /// The value of `definition` for `record`, or nil if the entry has none of the right type.
    static func value(_ definition: IndexDefinition, of record: EntryRecord) -> IndexValue? {
        switch definition.source {
        case .created: return definition.type == .date ? .date(EntryRecord.date(record.createdMilliseconds)) : nil
        case .modified: return definition.type == .date ? .date(EntryRecord.date(record.modifiedMilliseconds)) : nil
        case .metadata(let name):
            return record.metadata[name].flatMap { value($0, as: definition.type) }
        case .valuePath(let path):
            let scalar = record.valueBytes.withUnsafeBytes { JSONPathScanner.scalar(at: path, in: $0) }
            guard let scalar else { return nil }
            return value(scalar, as: definition.type)
        }
    }

    /// The value of `definition` for the record `view` reads in place (what ``value(_:of:)`` gives
    /// for the decoded record).
    static func value(_ definition: IndexDefinition, of view: EntryRecordView) -> IndexValue? {
        switch definition.source {
        case .created: return definition.type == .date ? .date(EntryRecord.date(view.createdMilliseconds)) : nil
        case .modified: return definition.type == .date ? .date(EntryRecord.date(view.modifiedMilliseconds)) : nil
        case .metadata(let name):
            guard let item = view.metadataValue(named: name) else { return nil }
            return value(item, as: definition.type)
        case .valuePath(let path):
            return JSONPathScanner.scalar(at: path, in: view.valueBytes).flatMap { value($0, as: definition.type) }
        }
    }

    /// A metadata item as a value of `type`.
    static func value(_ item: MetadataValue, as type: IndexType) -> IndexValue? {
        switch (item, type) {
        case (.int(let number), .int), (.int(let number), .double): return .int(number)
        case (.double(let number), .double): return .double(number)
        case (.string(let text), .string): return .string(text)
        case (.date(let date), .date): return .date(date)
        default: return nil
        }
    }

    /// A JSON scalar as a value of `type`: integers for int, numbers for double, strings for
    /// string, and for date a number of milliseconds since 1970 (the default serializer's dates)
    /// or an ISO 8601 string.
    static func value(_ scalar: JSONScalar, as type: IndexType) -> IndexValue? {
        switch (scalar, type) {
        case (.number(_, let exact?), .int): return .int(exact)
        case (.number(let number, _), .double): return .double(number)
        case (.string(let text), .string): return .string(text)
        case (.number(let number, _), .date): return .date(Date(timeIntervalSince1970: number / 1000))
        case (.string(let text), .date): return parseDate(text).map(IndexValue.date)
        default: return nil
        }
    }

    /// An ISO 8601 date (with or without fractional seconds).
    static func parseDate(_ text: String) -> Date? {
        if let date = try? Date.ISO8601FormatStyle(includingFractionalSeconds: true).parse(text) { return date }
        return try? Date.ISO8601FormatStyle().parse(text)
    }
}

/// How to read several indexes' values from one record: the indexes over one top-level member of
/// the JSON value all in one pass over it, the others one by one. The invariant: `values` gives,
/// position by position, what ``IndexExtraction/value(_:of:)`` gives for each definition.
///
/// A class, so that a put reads it through one reference instead of retaining each of its arrays.
final class ExtractionPlan: Sendable {
    /// The positions of the definitions read in the one pass, and their members' names.
    private let memberPositions: [Int]
    private let memberNames: [[UInt8]]
    private let memberTypes: [IndexType]
    private let count: Int

    /// The plan for `definitions`; those `excluded` says are left to the caller's closure.
    init(_ definitions: [IndexDefinition], excluding excluded: (Int) -> Bool = { _ in false }) {
        var positions: [Int] = []
        var names: [String] = []
        var types: [IndexType] = []
        for (position, definition) in definitions.enumerated() where !excluded(position) {
            if case .valuePath(let path) = definition.source, path.count == 1 {
                positions.append(position)
                names.append(path[0])
                types.append(definition.type)
            }
        }
        // One member gains nothing from the one pass; more than 64 are read one by one.
        let worthIt = (2...64).contains(names.count)
        memberPositions = worthIt ? positions : []
        memberNames = worthIt ? names.map { Array($0.utf8) } : []
        memberTypes = worthIt ? types : []
        count = definitions.count
    }

    /// Writes the value of every definition into `result`, position by position: the planned ones
    /// from `valueBytes` (the JSON value), the others from `other` (given the position). `result`
    /// is overwritten in place when it has the right count already, so that a caller reusing one
    /// array allocates nothing.
    func values(valueBytes: UnsafeRawBufferPointer, into result: inout [IndexValue?], other: (Int) -> IndexValue?) {
        if result.count != count {
            // Appended, not `Array(repeating:count:)`, which for an optional enum runs unspecialized
            // generic code.
            result.removeAll(keepingCapacity: true)
            result.reserveCapacity(count)
            for _ in 0..<count { result.append(nil) }
        }
        guard !memberNames.isEmpty else {
            for position in 0..<count { result[position] = other(position) }
            return
        }
        var planned = 0
        for position in 0..<count {
            if planned < memberPositions.count, memberPositions[planned] == position {
                // Filled by the pass below, if the member is there.
                result[position] = nil
                planned += 1
            } else {
                result[position] = other(position)
            }
        }
        JSONPathScanner.forEachMember(memberNames, in: valueBytes) { which, scalar in
            result[memberPositions[which]] = scalar.flatMap { IndexExtraction.value($0, as: memberTypes[which]) }
        }
    }
}
