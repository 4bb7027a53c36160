import ArgumentParser

/// `mappedkv cache stats`: the cache's counts.
struct CacheStatsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "stats",
        abstract: "Print the counts: count, bytes, inline, files and orphans, one `NAME N` line each.",
        discussion: """
            count: entries (expired ones not yet trimmed included); bytes: their value bytes; \
            inline and files: how many values are inside the manifest or in their own file; \
            orphans: files and folders no entry accounts for, which trim deletes. With --json: one \
            JSON object with the same five names.
            """)

    @OptionGroup var cache: CacheOptions
    @Flag(name: .long, help: "Print one JSON object.")
    var json = false

    func run() throws {
        let opened = try cache.open()
        defer { opened.close() }
        let statistics = try reportingCacheErrors { try opened.statistics() }
        let counts = [
            ("count", statistics.count), ("bytes", statistics.bytes), ("inline", statistics.inlineCount),
            ("files", statistics.fileCount), ("orphans", statistics.orphanCount),
        ]
        if json {
            try JSONOutput.print(Dictionary(uniqueKeysWithValues: counts))
        } else {
            for (name, value) in counts { print("\(name) \(value)") }
        }
    }
}
