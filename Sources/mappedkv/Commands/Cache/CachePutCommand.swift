import ArgumentParser
import Glibc
import MappedKVCache

/// `mappedkv cache put`: stores one value.
struct CachePutCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "put",
        abstract: "Store VALUE's UTF-8 bytes, or the bytes of --file, under KEY.",
        discussion: """
            Creates the cache if DIR does not exist. Any limits given are applied (a trim) before \
            the command returns.
            """)

    @OptionGroup var cache: CacheOptions
    @Option(name: .long, help: ArgumentHelp("Store the bytes of this file.", valueName: "path"))
    var file: String?
    @Option(name: .long, help: ArgumentHelp("Expire the entry after this many seconds.", valueName: "seconds"))
    var ttl: Double?
    /// Kills the process with SIGKILL at this point of the set, for crash tests.
    @Option(name: .long, help: .hidden)
    var crashAt: String?
    @Argument(help: "The key.") var key: String
    @Argument(help: "The value (its UTF-8 bytes are stored); give it or --file.") var value: String?

    func validate() throws {
        switch (value, file) {
        case (nil, nil): throw ValidationError("give VALUE or --file PATH")
        case (.some, .some): throw ValidationError("give VALUE or --file PATH, not both")
        default: break
        }
        if let ttl, !(ttl.isFinite && ttl > 0) {
            throw ValidationError("--ttl must be a positive number of seconds (got \(ttl))")
        }
        if let crashAt, CacheFaultPoint(rawValue: crashAt) == nil {
            let points = CacheFaultPoint.allCases.map(\.rawValue).joined(separator: ", ")
            throw ValidationError("--crash-at must be one of \(points) (got '\(crashAt)')")
        }
    }

    func run() throws {
        let bytes: [UInt8]
        if let file {
            do { bytes = try BinaryFile.read(file) } catch {
                throw fail(.failure, "--file: \(error)")
            }
        } else {
            bytes = Array((value ?? "").utf8)
        }
        let opened = try cache.open(creating: true)
        defer { opened.close() }
        if let point = crashAt.flatMap(CacheFaultPoint.init(rawValue:)) {
            opened.setFaultHook { reached in
                if reached == point { kill(getpid(), SIGKILL) }
            }
        }
        try reportingCacheErrors {
            try opened.set(bytes, forKey: key, timeToLive: ttl.map(Duration.cacheSeconds))
            if !cache.limits.isEmpty { try opened.trim() }
        }
    }
}
