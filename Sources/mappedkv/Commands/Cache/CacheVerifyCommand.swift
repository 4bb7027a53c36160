import ArgumentParser

/// `mappedkv cache verify`: checks the manifest against the value files and their CRCs.
struct CacheVerifyCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "verify",
        abstract: "Check every entry's bytes and look for orphans; exit 0 only if the cache is consistent.",
        discussion: """
            Prints one line per problem: a record that does not decode, a value file or inline \
            value that is missing, short or fails its CRC, a file no entry records, a temporary \
            file of a process that ended, an unfinished removal, an access time without an entry. \
            With --repair, drops every entry that cannot be served and deletes the orphans, then \
            checks again: exits 0 if the cache is then consistent (problems still there are \
            printed as `after repair: ...`). Meant for a cache no other process is changing.
            """)

    @OptionGroup var cache: CacheOptions
    @Flag(name: .long, help: "Drop what cannot be served and delete the orphans.")
    var repair = false

    func run() throws {
        let opened = try cache.open()
        defer { opened.close() }
        let problems = try reportingCacheErrors { try opened.verify(repair: repair) }
        for problem in problems { print(problem) }
        guard !problems.isEmpty else { return }
        guard repair else { throw ExitStatus.damaged.exitCode }
        let remaining = try reportingCacheErrors { try opened.verify() }
        for problem in remaining { print("after repair: " + problem) }
        if !remaining.isEmpty { throw ExitStatus.damaged.exitCode }
    }
}
