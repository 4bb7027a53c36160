import ArgumentParser

/// `mappedkv cache trim`: applies the limits now.
struct CacheTrimCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "trim",
        abstract: "Apply the limits now, least recently used first, and delete orphan files.",
        discussion: """
            Also removes expired entries and records that cannot be served. Without limits only \
            those and the orphans go. Waits for another process's trim to finish first. Prints nothing.
            """)

    @OptionGroup var cache: CacheOptions

    func run() throws {
        let opened = try cache.open()
        defer { opened.close() }
        try reportingCacheErrors { _ = try opened.trim() }
    }
}
