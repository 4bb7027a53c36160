import ArgumentParser

/// `mappedkv cache stats`: the cache's counts.
struct CacheStatsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "stats",
        abstract: "Print the counts: count, bytes, inline, files and orphans, one `NAME N` line each.",
        discussion: """
            count: entries (expired ones not yet trimmed included); bytes: their value bytes; \
            inline and files: how many values are inside the manifest or in their own file; \
            orphans: files and folders no entry accounts for, which trim deletes.
            """)

    @OptionGroup var cache: CacheOptions

    func run() throws {
        let opened = try cache.open()
        defer { opened.close() }
        let statistics = try reportingCacheErrors { try opened.statistics() }
        print("count \(statistics.count)")
        print("bytes \(statistics.bytes)")
        print("inline \(statistics.inlineCount)")
        print("files \(statistics.fileCount)")
        print("orphans \(statistics.orphanCount)")
    }
}
