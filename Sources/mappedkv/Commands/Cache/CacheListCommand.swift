import ArgumentParser
import Foundation
import MappedKVCache

/// `mappedkv cache ls`: lists the live entries, least recently used first.
///
/// A key may hold any character, so the text form escapes the four that would break a line into
/// more or fewer than three tab-separated fields: `\` as `\\`, tab as `\t`, newline as `\n` and
/// carriage return as `\r`. `--json` prints the keys as they are, in one JSON array.
struct CacheListCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "ls",
        abstract: "List the live entries, least recently used first: KEY<TAB>SIZE<TAB>inline|file.",
        discussion: """
            SIZE is the value's length in bytes; `inline` values are inside the manifest, `file` \
            values in their own file. Expired entries (not yet trimmed) are not listed. In KEY, a \
            backslash is printed as \\\\, a tab as \\t, a newline as \\n and a carriage return as \
            \\r, so every entry is one line of three fields. With --json: one JSON array, in the \
            same order, of objects {"key", "size", "storage": "inline" or "file", "lastAccess", \
            "expiry"} (times in milliseconds since 1970; expiry null when the entry never expires).
            """)

    @OptionGroup var cache: CacheOptions
    @Flag(name: .long, help: "Print the entries as a JSON array.")
    var json = false

    func run() throws {
        let opened = try cache.open()
        defer { opened.close() }
        let entries = try reportingCacheErrors { try opened.entries() }
        if json {
            try JSONOutput.print(entries.map(Self.jsonObject))
        } else {
            for entry in entries {
                print("\(Self.escaped(entry.key))\t\(entry.size)\t\(entry.isInline ? "inline" : "file")")
            }
        }
    }

    /// `key` with backslash, tab, newline and carriage return escaped (`\\`, `\t`, `\n`, `\r`).
    static func escaped(_ key: String) -> String {
        var text = ""
        text.reserveCapacity(key.utf8.count)
        for scalar in key.unicodeScalars {
            switch scalar {
            case "\\": text += "\\\\"
            case "\t": text += "\\t"
            case "\n": text += "\\n"
            case "\r": text += "\\r"
            default: text.unicodeScalars.append(scalar)
            }
        }
        return text
    }

    /// The `--json` object of one entry.
    static func jsonObject(_ entry: DiskCacheEntryInfo) -> [String: Any] {
        [
            "key": entry.key, "size": entry.size, "storage": entry.isInline ? "inline" : "file",
            "lastAccess": NSNumber(value: entry.lastAccess),
            "expiry": entry.expiry.map { NSNumber(value: $0) as Any } ?? NSNull(),
        ]
    }
}
