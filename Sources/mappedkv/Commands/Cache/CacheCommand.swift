import ArgumentParser

/// `mappedkv cache`: the disk cache's subcommands.
struct CacheCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "cache",
        abstract: "Store, read, list, trim and check a disk cache (a directory shared safely by processes).",
        discussion: """
            The cache's manifest is a multi-process store in DIR (values up to --inline-threshold \
            bytes inside it, larger ones in DIR/files), so any number of processes may use one \
            cache at once. Every subcommand takes --dir, the limit options and the store options \
            (the key options, --lock, --verbose; --multi-process is accepted and has no effect, \
            since the manifest is always shared); put applies the limits after storing, trim \
            applies them now, the others ignore them. --lock is the manifest's lock, shared-memory \
            by default: every process using the directory must use the same one.
            """,
        subcommands: [
            CachePutCommand.self, CacheGetCommand.self, CacheRemoveCommand.self, CacheListCommand.self,
            CacheStatsCommand.self, CacheTrimCommand.self, CacheVerifyCommand.self,
        ]
    )
}
