import ArgumentParser
import Foundation
import MappedKVIO

/// `mappedkv cache get`: writes one value's bytes, exactly as stored.
struct CacheGetCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "get",
        abstract: "Write the value of KEY to standard output or --out, byte for byte (exit 1 if absent).",
        discussion: """
            Nothing is added to the bytes (no newline). On a miss, prints `not found` on standard \
            error and exits 1; a value whose bytes fail their check is a miss (and is dropped). A hit \
            counts as an access for the least-recently-used order.
            """)

    @OptionGroup var cache: CacheOptions
    @Option(name: .long, help: ArgumentHelp("Write the value to this file instead.", valueName: "path"))
    var out: String?
    @Argument(help: "The key.") var key: String

    func run() throws {
        let opened = try cache.open()
        defer { opened.close() }
        guard let value = try reportingCacheErrors({ try opened.value(forKey: key) }) else {
            FileHandle.standardError.write(Data("not found\n".utf8))
            throw ExitStatus.keyNotFound.exitCode
        }
        if let out {
            do { try BinaryFile.write(value, to: out) } catch {
                throw fail(.failure, "--out: \(error)")
            }
        } else {
            FileHandle.standardOutput.write(Data(value))
        }
    }
}
