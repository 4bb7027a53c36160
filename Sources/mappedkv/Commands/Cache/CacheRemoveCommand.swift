import ArgumentParser

/// `mappedkv cache rm`: removes one entry.
struct CacheRemoveCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "rm", abstract: "Remove the entry of KEY and its file; an absent key is not an error.")

    @OptionGroup var cache: CacheOptions
    @Argument(help: "The key.") var key: String

    func run() throws {
        let opened = try cache.open()
        defer { opened.close() }
        try reportingCacheErrors { try opened.removeValue(forKey: key) }
    }
}
