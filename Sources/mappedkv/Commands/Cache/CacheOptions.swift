import ArgumentParser
import Foundation
import MappedKVCache
import MappedKVIO

/// The options that name and configure a disk cache, shared by every `mappedkv cache` subcommand.
///
/// The limits are the cache's configured limits: `put` applies them after storing its value and
/// `trim` applies them; the other subcommands accept them (so one set of options fits every call
/// of a script) and leave the cache's size alone. The key, lock and logging options are the store
/// commands' own (``StoreAccessOptions``); an encrypted cache opened with the wrong key, or none,
/// is refused and nothing on disk changes. `--lock` chooses the manifest's lock, shared-memory
/// (the cache's default) when not given; `--multi-process` is accepted and noted as having no
/// effect, since a cache's manifest is always shared between processes.
struct CacheOptions: ParsableArguments {
    @Option(name: .long, help: ArgumentHelp("The cache's directory.", valueName: "dir"))
    var dir: String

    @Option(name: .long, help: ArgumentHelp("Keep at most this many entries.", valueName: "n"))
    var countLimit: Int?

    @Option(name: .long, help: ArgumentHelp("Keep at most this many value bytes.", valueName: "bytes"))
    var byteLimit: Int?

    @Option(
        name: .long, help: ArgumentHelp("Drop entries not accessed for this many seconds.", valueName: "seconds"))
    var ageLimit: Double?

    @Option(
        name: .long,
        help: ArgumentHelp("Drop least recently used entries until this many bytes are free.", valueName: "bytes"))
    var freeSpaceLimit: Int?

    @Option(
        name: .long,
        help: ArgumentHelp("Values up to this many bytes go inside the manifest (default 20480).", valueName: "bytes"))
    var inlineThreshold: Int?

    @OptionGroup var access: StoreAccessOptions

    func validate() throws {
        guard !dir.isEmpty else { throw ValidationError("--dir must not be empty") }
        for (name, value) in [
            ("--count-limit", countLimit), ("--byte-limit", byteLimit), ("--free-space-limit", freeSpaceLimit),
            ("--inline-threshold", inlineThreshold),
        ] {
            if let value, value < 0 { throw ValidationError("\(name) must not be negative (got \(value))") }
        }
        if let ageLimit, !(ageLimit.isFinite && ageLimit >= 0) {
            throw ValidationError("--age-limit must be a number of seconds, not negative (got \(ageLimit))")
        }
    }

    /// The limits the options give; empty when none is given.
    var limits: DiskCacheLimits {
        DiskCacheLimits(
            count: countLimit, bytes: byteLimit, age: ageLimit.map(Duration.cacheSeconds), freeSpace: freeSpaceLimit)
    }

    /// The cache's configuration: the limits, the inline threshold and the key; no background trim.
    func configuration() throws -> DiskCacheConfiguration {
        var configuration = DiskCacheConfiguration(limits: limits)
        if let inlineThreshold { configuration.inlineThreshold = inlineThreshold }
        configuration.cryptKey = try access.resolvedKey()
        configuration.processLock = access.lockChoice ?? .sharedMemory
        return configuration
    }

    /// Opens the cache. Only `creating` opens make a missing directory; the others refuse it, so a
    /// mistyped `--dir` is an error rather than a new, empty cache.
    func open(creating: Bool = false) throws -> DiskCache {
        access.noteUnused(
            [
                (.multiProcess, "a cache's manifest is always shared between processes"),
                (.noIndexFile, "a cache's manifest always keeps its index file"),
            ], command: "cache commands")
        let configuration = try configuration()
        var isDirectory: ObjCBool = false
        if !creating
            && !(FileManager.default.fileExists(atPath: dir, isDirectory: &isDirectory) && isDirectory.boolValue)
        {
            throw fail(.storeNotFound, "no cache directory at \(dir)")
        }
        let logger = access.logger
        return try reportingCacheErrors { try DiskCache(directory: dir, configuration: configuration, logger: logger) }
    }
}

extension Duration {
    /// A non-negative, finite number of seconds as a duration, saturating at `Int64.max` seconds
    /// (where `Duration.seconds(_:)` would trap): any longer time is as good as forever.
    static func cacheSeconds(_ seconds: Double) -> Duration {
        seconds >= 9.2e18 ? .seconds(Int64.max) : .seconds(seconds)
    }
}

/// Runs `body`, turning a cache or file error into a one-line message on standard error and its
/// exit status (``ExitStatus``: a store error keeps its own, anything else is 2).
func reportingCacheErrors<T>(_ body: () throws -> T) throws -> T {
    do {
        return try body()
    } catch let error as CacheError {
        if case .store(let storeError) = error { throw fail(ExitStatus(storeError), error.description) }
        throw fail(.failure, error.description)
    } catch let error as SystemError {
        throw fail(.failure, error.description)
    }
}
