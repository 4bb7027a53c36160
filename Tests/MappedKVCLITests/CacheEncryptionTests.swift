import Foundation
import MappedKVProcessTestSupport
import Testing

/// An encrypted disk cache through the CLI: values put with a key (from the command line, a
/// file or the environment; AES-128 or AES-256) come back with the same key and appear nowhere
/// in plain text; without the key, with a wrong one or with the wrong key size, every
/// subcommand fails with a clear error and the manifest and value files stay byte-for-byte
/// unchanged.
@Suite("cache encryption")
struct CacheEncryptionTests {
    /// A marker that must not appear in plain text in any file of an encrypted cache.
    static let marker = Array("PLAINTEXT-MARKER-0123456789".utf8)

    /// An inline value and a file value, both carrying ``marker``.
    static func values() -> [(key: String, value: [UInt8])] {
        [
            ("small", marker + CacheValues.everyByte(count: 40)),
            ("large", marker + CacheValues.random(count: 50_000, seed: 21) + marker),
        ]
    }

    @Test("the same key reads the values back; no file holds them in plain text", arguments: [false, true])
    func roundTrip(aes256: Bool) throws {
        try TemporaryDirectory.with { tmp in
            let options = ["--crypt-key", "cache-secret"] + (aes256 ? ["--aes256"] : [])
            let cache = CacheCLI(dir: tmp.path("cache"), options: options + ["--inline-threshold", "1000"])
            for (key, value) in Self.values() { try cache.put(key, bytes: value, in: tmp) }
            for (key, value) in Self.values() { #expect(try cache.get(key) == value) }
            #expect(try cache.stats() == ["count": 2, "bytes": 50_121, "inline": 1, "files": 1, "orphans": 0])
            try cache.succeed("verify")
            for (path, bytes) in try DirectorySnapshot(cache.dir).entries {
                guard let bytes else { continue }
                #expect(bytes.range(of: Data(Self.marker)) == nil, "\(path) holds a value in plain text")
            }
        }
    }

    @Test("the key can come from a file or an environment variable")
    func keySources() throws {
        try TemporaryDirectory.with { tmp in
            let keyFile = try tmp.write("cache-secret\n", to: "key")
            let writer = CacheCLI(dir: tmp.path("cache"), options: ["--crypt-key-file", keyFile])
            try writer.put("large", bytes: Self.values()[1].value, in: tmp)
            let reader = CacheCLI(dir: writer.dir, options: ["--crypt-key-env", "MAPPEDKV_CACHE_TEST_KEY"])
            let result = try reader.run("get", ["large"], environment: ["MAPPEDKV_CACHE_TEST_KEY": "cache-secret"])
            #expect(result.succeeded && [UInt8](result.stdoutData) == Self.values()[1].value, "\(result)")
            #expect(try CacheCLI(dir: writer.dir, options: ["--crypt-key", "cache-secret"]).get("large") != nil)
        }
    }

    @Test("no key, a wrong key or the wrong key size fail clearly and change nothing")
    func wrongKeys() throws {
        try TemporaryDirectory.with { tmp in
            let right = CacheCLI(dir: tmp.path("cache"), options: ["--crypt-key", "cache-secret"])
            for (key, value) in Self.values() { try right.put(key, bytes: value, in: tmp) }
            _ = try right.get("small")
            let before = try DirectorySnapshot(right.dir)
            let valueFile = try tmp.write("new value", to: "value")
            for options in [[], ["--crypt-key", "wrong-secret"], ["--crypt-key", "cache-secret", "--aes256"]] {
                let wrong = CacheCLI(dir: right.dir, options: options)
                for (subcommand, arguments) in [
                    ("get", ["large"]), ("get", ["small"]), ("put", ["small", "--file", valueFile]),
                    ("put", ["other", "value"]), ("rm", ["large"]), ("ls", []), ("stats", []),
                    ("trim", ["--count-limit", "0"]), ("verify", ["--repair"]),
                ] {
                    let result = try wrong.fail(subcommand, arguments)
                    // Without a key, the IV in the manifest's meta file says the cache is encrypted.
                    let message = options.isEmpty ? "no key was given: pass its key" : "wrong encryption key"
                    #expect(result.stderr.contains(message), "\(result)")
                    #expect(result.stdoutData.isEmpty, "\(result)")
                }
                let after = try DirectorySnapshot(right.dir)
                #expect(after == before, "options \(options) changed the cache: \(before) -> \(after)")
            }
            for (key, value) in Self.values() { #expect(try right.get(key) == value) }
        }
    }

    @Test("a plain cache opened with a key fails clearly and changes nothing")
    func keyOnPlainCache() throws {
        try TemporaryDirectory.with { tmp in
            let plain = CacheCLI(dir: tmp.path("cache"))
            for (key, value) in Self.values() { try plain.put(key, bytes: value, in: tmp) }
            let before = try DirectorySnapshot(plain.dir)
            let keyed = CacheCLI(dir: plain.dir, options: ["--crypt-key", "some-key"])
            for (subcommand, arguments) in [("get", ["large"]), ("put", ["k", "v"]), ("trim", [])] {
                let result = try keyed.fail(subcommand, arguments)
                #expect(result.stderr.contains("wrong encryption key"), "\(result)")
            }
            #expect(try DirectorySnapshot(plain.dir) == before)
            for (key, value) in Self.values() { #expect(try plain.get(key) == value) }
        }
    }
}
