import ArgumentParser

/// `mappedkv cache ls`: lists the live entries, least recently used first.
struct CacheListCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "ls",
        abstract: "List the live entries, least recently used first: KEY<TAB>SIZE<TAB>inline|file.",
        discussion: """
            SIZE is the value's length in bytes; `inline` values are inside the manifest, `file` \
            values in their own file. Expired entries (not yet trimmed) are not listed.
            """)

    @OptionGroup var cache: CacheOptions

    func run() throws {
        let opened = try cache.open()
        defer { opened.close() }
        for entry in try reportingCacheErrors({ try opened.entries() }) {
            print("\(entry.key)\t\(entry.size)\t\(entry.isInline ? "inline" : "file")")
        }
    }
}
