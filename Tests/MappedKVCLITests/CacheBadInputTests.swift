import Foundation
import MappedKVProcessTestSupport
import Testing

/// Bad input to `mappedkv cache` gets a clear message on standard error and a non-zero exit,
/// never a crash, and changes nothing: a missing or doubled value, an unreadable file, negative
/// limits, bad options, an empty key, a directory that is not a cache, and a manifest record that
/// claims a 2 GiB value for a small file.
@Suite("cache bad input")
struct CacheBadInputTests {
    @Test("bad arguments fail cleanly with a message and leave the cache unchanged")
    func badArguments() throws {
        try TemporaryDirectory.with { tmp in
            let cache = CacheCLI(dir: tmp.path("cache"))
            try cache.succeed("put", ["k", "v"])
            let before = try DirectorySnapshot(cache.dir)
            let unreadable = tmp.path("no-such-file")
            let cases: [(subcommand: String, arguments: [String], message: String)] = [
                ("put", ["k"], "give VALUE or --file PATH"),
                ("put", ["k", "v", "--file", tmp.path("x")], "not both"),
                ("put", ["k", "--file", unreadable], "--file: open \(unreadable): No such file or directory"),
                ("put", ["k", "--file", tmp.path("")], "--file: pread"),
                ("put", ["--count-limit=-1", "k", "v"], "--count-limit must not be negative"),
                ("put", ["--byte-limit=-5", "k", "v"], "--byte-limit must not be negative"),
                ("put", ["--free-space-limit=-1", "k", "v"], "--free-space-limit must not be negative"),
                ("put", ["--inline-threshold=-1", "k", "v"], "--inline-threshold must not be negative"),
                ("put", ["--age-limit=-2", "k", "v"], "--age-limit must be a number of seconds"),
                ("put", ["--count-limit", "-1", "k", "v"], "--count-limit"),
                ("put", ["--count-limit", "many", "k", "v"], "--count-limit"),
                ("put", ["--ttl=0", "k", "v"], "--ttl must be a positive number"),
                ("put", ["--crash-at", "nowhere", "k", "v"], "--crash-at must be one of"),
                ("put", ["", "v"], "invalid cache key: the key is empty"),
                ("put", ["--crypt-key", "a", "--crypt-key-env", "B", "k", "v"], "give the key once"),
                ("put", ["--aes256", "k", "v"], "--aes256 needs a key"),
                ("put", ["--crypt-key-file", unreadable, "k", "v"], "cannot read"),
                ("put", ["--crypt-key-env", "MAPPEDKV_CACHE_TEST_UNSET", "k", "v"], "is not set"),
                ("get", [], "Missing expected argument"),
                ("get", [""], "invalid cache key"),
                ("trim", ["--count-limit=-3"], "--count-limit must not be negative"),
                ("verify", ["--age-limit=-1"], "--age-limit"),
            ]
            for item in cases {
                let result = try cache.fail(item.subcommand, item.arguments)
                #expect(result.stderr.contains(item.message), "\(result)")
            }
            #expect(try DirectorySnapshot(cache.dir) == before)
            #expect(try cache.get("k") == Array("v".utf8))
            // A hit whose --out cannot be written (the read itself counts as an access).
            let out = try cache.fail("get", ["k", "--out", tmp.path("no-such-folder/out")])
            #expect(out.stderr.contains("--out: open") && out.stdoutData.isEmpty, "\(out)")
        }
    }

    @Test("every subcommand but put refuses a missing directory instead of creating a cache")
    func missingDirectory() throws {
        try TemporaryDirectory.with { tmp in
            let cache = CacheCLI(dir: tmp.path("absent"))
            for (subcommand, arguments) in [
                ("get", ["k"]), ("rm", ["k"]), ("ls", []), ("stats", []), ("trim", []), ("verify", []),
            ] {
                let result = try cache.fail(subcommand, arguments)
                #expect(result.stderr.contains("no cache directory at \(cache.dir)"), "\(result)")
            }
            #expect(!FileManager.default.fileExists(atPath: cache.dir))
        }
    }

    @Test("a manifest that is not a store is no crash: a clear error, or a miss after the store's recovery")
    func foreignManifest() throws {
        try TemporaryDirectory.with { tmp in
            let dir = try tmp.makeDirectory("cache")
            try Data(repeating: 0xAB, count: 4096).write(to: URL(fileURLWithPath: dir + "/manifest"))
            try Data(repeating: 0xCD, count: 4096).write(to: URL(fileURLWithPath: dir + "/manifest.crc"))
            let result = try CacheCLI(dir: dir).run("get", ["k"])
            #expect(result.exitedNormally && result.status != 0, "\(result)")
            #expect(result.stderr.contains("cache manifest:") || result.stderr == "not found\n", "\(result)")
        }
    }

    @Test("a record claiming a 2 GiB value for a 500-byte file is a miss, even with 1.2 GiB of address space")
    func hugeRecordedSize() throws {
        try TemporaryDirectory.with { tmp in
            let cache = CacheCLI(dir: tmp.path("cache"), options: ["--inline-threshold", "64"])
            try cache.put("victim", bytes: CacheValues.everyByte(count: 500), in: tmp)
            let manifest = ["--root", cache.dir, "--id", "manifest", "--multi-process", "--lock", "shared-memory"]
            let record = try CLI.succeed(["get"] + manifest + ["--type", "bytes", "e:victim"]).stdout
            // Version, flags, then the size's varint (f403 for 500), replaced by Int32.max's.
            #expect(record.hasPrefix("0100f403"), "\(record)")
            let damaged = "0100ffffffff07" + record.dropFirst(8).trimmingCharacters(in: .whitespacesAndNewlines)
            try CLI.succeed(["set"] + manifest + ["--type", "bytes", "e:victim", damaged])

            // The storage for the value is not allocated before the file's size is known: under
            // this limit an allocation of 2 GiB fails, which would stop the process.
            let binary = try CLI.binary.get().path
            let reader = Process()
            reader.executableURL = URL(fileURLWithPath: "/bin/sh")
            reader.arguments =
                ["-c", #"ulimit -v 1228800 && exec "$0" "$@""#, binary] + cache.arguments("get", ["victim"])
            let errors = Pipe()
            reader.standardError = errors
            reader.standardOutput = FileHandle.nullDevice
            try reader.run()
            let message = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            reader.waitUntilExit()
            #expect(reader.terminationReason == .exit && reader.terminationStatus == 1, "\(message)")
            #expect(message == "not found\n")
            #expect(try cache.valueFiles().isEmpty, "the miss dropped the entry and its file")
        }
    }
}
