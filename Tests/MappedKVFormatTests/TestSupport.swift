import Foundation
import MappedKVFormat

/// Locating and parsing the vector files under `Vectors/`.
enum VectorFiles {
    /// The package root: this file is `<root>/Tests/MappedKVFormatTests/TestSupport.swift`.
    static let packageRoot: URL = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent()  // MappedKVFormatTests
        .deletingLastPathComponent()  // Tests
        .deletingLastPathComponent()  // package root

    /// `Vectors/format/<name>`.
    static func formatURL(_ name: String) -> URL {
        packageRoot.appendingPathComponent("Vectors/format/\(name)")
    }

    /// `Vectors/<relativePath>`.
    static func url(_ relativePath: String) -> URL {
        packageRoot.appendingPathComponent("Vectors/\(relativePath)")
    }

    /// The bytes of a file.
    static func bytes(_ url: URL) throws -> [UInt8] {
        [UInt8](try Data(contentsOf: url))
    }

    /// The text of a file as UTF-8.
    static func text(_ url: URL) throws -> String {
        String(decoding: try bytes(url), as: UTF8.self)
    }

    /// The non-comment, non-blank lines of a vector file, split at TABs (empty fields kept).
    static func rows(_ name: String) throws -> [[String]] {
        try rows(at: formatURL(name))
    }

    /// The non-comment, non-blank lines of a file, split at TABs (empty fields kept).
    static func rows(at url: URL, skipsComments: Bool = true) throws -> [[String]] {
        try text(url)
            .split(separator: "\n", omittingEmptySubsequences: true)
            .filter { !(skipsComments && $0.hasPrefix("#")) && !$0.allSatisfy(\.isWhitespace) }
            .map { $0.split(separator: "\t", omittingEmptySubsequences: false).map(String.init) }
    }

    /// Rows of a vector file, or no rows if it cannot be read (a separate test checks the files exist).
    static func rowsOrEmpty(_ name: String) -> [[String]] {
        (try? rows(name)) ?? []
    }

    /// A hex file: `#` comment lines dropped, whitespace ignored.
    static func hexFile(_ name: String) throws -> [UInt8] {
        let text = try text(formatURL(name))
        let hex = text.split(separator: "\n")
            .filter { !$0.hasPrefix("#") }
            .joined()
        return try [UInt8](hex: hex)
    }
}

struct HexError: Error, CustomStringConvertible {
    var text: String
    var description: String { "not hex: \(text)" }
}

extension Array where Element == UInt8 {
    /// Parses hex digits, ignoring whitespace; `-` alone means no bytes.
    init(hex: some StringProtocol) throws {
        let digits = String(hex.filter { !$0.isWhitespace })
        if digits == "-" {
            self = []
            return
        }
        guard digits.count % 2 == 0 else { throw HexError(text: String(hex)) }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(digits.count / 2)
        var index = digits.startIndex
        while index < digits.endIndex {
            let next = digits.index(index, offsetBy: 2)
            guard let byte = UInt8(digits[index..<next], radix: 16) else { throw HexError(text: String(hex)) }
            bytes.append(byte)
            index = next
        }
        self = bytes
    }

    /// Lowercase hex.
    var hex: String {
        map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined()
    }
}

/// Parses the quoted-string syntax of `payloads.txt`: `"..."` with `\"` and `\\` escapes.
enum QuotedString {
    struct ParseError: Error {}

    /// Parses one quoted string starting at `index`, leaving `index` just past the closing quote.
    static func parse(_ text: [Character], at index: inout Int) throws -> String {
        guard index < text.count, text[index] == "\"" else { throw ParseError() }
        index += 1
        var result = ""
        while true {
            guard index < text.count else { throw ParseError() }
            let character = text[index]
            index += 1
            switch character {
            case "\"": return result
            case "\\":
                guard index < text.count else { throw ParseError() }
                result.append(text[index])
                index += 1
            default: result.append(character)
            }
        }
    }

    /// A whole field holding one quoted string.
    static func string(_ field: String) throws -> String {
        let characters = Array(field)
        var index = 0
        let result = try parse(characters, at: &index)
        guard index == characters.count else { throw ParseError() }
        return result
    }

    /// A whole field holding `[]` or `["a","bc",...]`.
    static func list(_ field: String) throws -> [String] {
        let characters = Array(field)
        guard characters.first == "[", characters.last == "]" else { throw ParseError() }
        var index = 1
        var items: [String] = []
        if characters.count == 2 { return [] }
        while true {
            items.append(try parse(characters, at: &index))
            guard index < characters.count else { throw ParseError() }
            if characters[index] == "]" {
                guard index == characters.count - 1 else { throw ParseError() }
                return items
            }
            guard characters[index] == "," else { throw ParseError() }
            index += 1
        }
    }
}

/// SplitMix64: a small seeded generator, so every "random" test is deterministic.
struct SplitMix64: RandomNumberGenerator {
    private var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

extension SplitMix64 {
    /// Random bytes.
    mutating func bytes(count: Int) -> [UInt8] {
        (0..<count).map { _ in UInt8.random(in: 0...255, using: &self) }
    }

    /// A 64-bit value whose bit length is itself uniformly random, so every varint length is common.
    mutating func valueOfRandomWidth() -> UInt64 {
        let width = Int.random(in: 0...64, using: &self)
        if width == 0 { return 0 }
        return next() >> UInt64(64 - width)
    }
}

/// Helpers over `[UInt8]` for APIs that take raw buffers.
extension Array where Element == UInt8 {
    /// Decodes `self` as a data region.
    func decodeRegion(from start: Int = 0, skipsHolder: Bool) -> (DecodeSummary, [RecordLocation]) {
        var locations: [RecordLocation] = []
        let summary = withUnsafeBytes { raw in
            RecordDecoder.decode(raw, from: start, skipsHolder: skipsHolder) { locations.append($0) }
        }
        return (summary, locations)
    }
}

/// Builds region bytes for tests.
enum RegionBuilder {
    /// `varint(key.count) key varint(value.count) value`.
    static func record(_ key: [UInt8], _ value: [UInt8]) -> [UInt8] {
        var bytes: [UInt8] = []
        key.withUnsafeBytes { k in value.withUnsafeBytes { v in Record.append(key: k, value: v, to: &bytes) } }
        return bytes
    }

    static func record(_ key: String, _ value: [UInt8]) -> [UInt8] {
        record(Array(key.utf8), value)
    }

    /// `varint(key.count) key 00`.
    static func deletion(_ key: String) -> [UInt8] {
        var bytes: [UInt8] = []
        Array(key.utf8).withUnsafeBytes { Record.appendDeletion(key: $0, to: &bytes) }
        return bytes
    }

    /// A 4-byte holder as MMKV writes it.
    static let holder: [UInt8] = [0x80, 0xE0, 0xE9, 0x74]
}

/// Replays decoded records into the live key set: the last record wins, an empty value deletes.
func liveKeys(_ region: [UInt8], _ locations: [RecordLocation]) -> [[UInt8]: [UInt8]] {
    var live: [[UInt8]: [UInt8]] = [:]
    for location in locations {
        let key = Array(region[location.keyRange])
        if location.isDeletion {
            live[key] = nil
        } else {
            live[key] = Array(region[location.valueRange])
        }
    }
    return live
}

/// The worked example of docs/FORMAT.md 2.11: its data region and expected state.
struct WorkedExample {
    var region: [UInt8]
    var meta: [String: String]
    var facts: [String: String]
    /// Live keys (UTF-8 bytes) and their payloads.
    var keys: [[UInt8]: [UInt8]]

    static func load() throws -> WorkedExample {
        let region = try VectorFiles.hexFile("worked-example-2.11.hex")
        var meta: [String: String] = [:]
        var facts: [String: String] = [:]
        var keys: [[UInt8]: [UInt8]] = [:]
        for row in try VectorFiles.rows("worked-example-2.11.txt") where row.count == 3 {
            switch row[0] {
            case "meta": meta[row[1]] = row[2]
            case "region": facts[row[1]] = row[2]
            case "key": keys[Array(row[1].utf8)] = try [UInt8](hex: row[2])
            default: break
            }
        }
        return WorkedExample(region: region, meta: meta, facts: facts, keys: keys)
    }

    func metaHex(_ field: String) -> UInt32? { meta[field].flatMap { UInt32($0, radix: 16) } }
    func metaDecimal(_ field: String) -> UInt64? { meta[field].flatMap { UInt64($0) } }
    func fact(_ name: String) -> Int? { facts[name].flatMap { Int($0) } }
}

/// One store written by MMKV 2.4.2 under `Vectors/mmkv-2.4.2/<folder>/`.
struct MMKVCase {
    var data: [UInt8]
    var meta: [UInt8]
    /// Live keys and payloads from `<id>.expect`.
    var expected: [[UInt8]: [UInt8]]
    var expectedCount: Int?
    /// `info.txt` fields.
    var info: [String: String]

    static func load(folder: String, id: String) throws -> MMKVCase {
        let base = "mmkv-2.4.2/\(folder)/"
        var expected: [[UInt8]: [UInt8]] = [:]
        var count: Int?
        for row in try VectorFiles.rows(at: VectorFiles.url(base + "\(id).expect"), skipsComments: false)
        where row.count == 2 {
            if row[0] == "#count" {
                count = Int(row[1])
            } else {
                expected[Array(row[0].utf8)] = try [UInt8](hex: row[1])
            }
        }
        var info: [String: String] = [:]
        for row in try VectorFiles.rows(at: VectorFiles.url(base + "info.txt")) where row.count == 2 {
            info[row[0]] = row[1]
        }
        return MMKVCase(
            data: try VectorFiles.bytes(VectorFiles.url(base + "root/\(id)")),
            meta: try VectorFiles.bytes(VectorFiles.url(base + "root/\(id).crc")),
            expected: expected, expectedCount: count, info: info)
    }
}
