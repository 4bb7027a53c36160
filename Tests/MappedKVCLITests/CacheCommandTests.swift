import Foundation
import MappedKVProcessTestSupport
import Testing

/// `mappedkv cache` subcommands, each run as a real process: put and get round-trip any bytes
/// exactly (inline and in files, through arguments, --file, standard output and --out), a miss
/// is `not found` and exit 1, rm removes, ls lists least recently used first (keys escaped so that
/// each entry is one line of three fields; --json exact), stats prints its five lines (or one JSON
/// object), trim and put apply the limits, and verify reports damage (exit 1) that --repair drops
/// so that verify is clean again.
@Suite("cache commands")
struct CacheCommandTests {
    /// A cache in a fresh directory with a small inline threshold, so small test values go to files.
    static func cache(in tmp: TemporaryDirectory) -> CacheCLI {
        CacheCLI(dir: tmp.path("cache"), options: ["--inline-threshold", "100"])
    }

    @Test("put and get round-trip any bytes exactly, inline and in a file, through --file, stdout and --out")
    func binaryRoundTrip() throws {
        try TemporaryDirectory.with { tmp in
            let cache = Self.cache(in: tmp)
            let inline = CacheValues.everyByte(count: 100)
            let file = CacheValues.everyByte(count: 256) + CacheValues.random(count: 70_000, seed: 1)
            try cache.put("inline", bytes: inline, in: tmp)
            try cache.put("file", bytes: file, in: tmp)
            for (key, value) in [("inline", inline), ("file", file)] {
                #expect(try cache.get(key) == value)
                let out = tmp.path("out-\(key)")
                let result = try cache.succeed("get", [key, "--out", out])
                #expect(result.stdoutData.isEmpty && result.stderrData.isEmpty, "\(result)")
                #expect(try Data(contentsOf: URL(fileURLWithPath: out)) == Data(value))
            }
            #expect(try cache.valueFiles().count == 1, "only the large value has a file")
        }
    }

    @Test("a VALUE argument stores its UTF-8 bytes, with nothing added on the way out")
    func textValues() throws {
        try TemporaryDirectory.with { tmp in
            let cache = Self.cache(in: tmp)
            let put = try cache.succeed("put", ["greeting", "héllo, wörld"])
            #expect(put.stdoutData.isEmpty && put.stderrData.isEmpty, "\(put)")
            #expect(try cache.get("greeting") == Array("héllo, wörld".utf8))
            try cache.succeed("put", ["--ttl", "3600", "empty", ""])
            #expect(try cache.get("empty") == [], "an empty value is a hit, not a miss")
            try cache.succeed("put", ["greeting", "replaced"])
            #expect(try cache.get("greeting") == Array("replaced".utf8))
        }
    }

    @Test("get of an absent key prints `not found` on stderr, exits 1 and writes no --out file")
    func miss() throws {
        try TemporaryDirectory.with { tmp in
            let cache = Self.cache(in: tmp)
            try cache.succeed("put", ["present", "x"])
            let out = tmp.path("out")
            for arguments in [["absent"], ["absent", "--out", out]] {
                let result = try cache.run("get", arguments)
                #expect(result.exitedNormally && result.status == 1, "\(result)")
                #expect(result.stderr == "not found\n" && result.stdoutData.isEmpty, "\(result)")
            }
            #expect(!FileManager.default.fileExists(atPath: out))
        }
    }

    @Test("rm removes an entry and its file; removing an absent key succeeds")
    func remove() throws {
        try TemporaryDirectory.with { tmp in
            let cache = Self.cache(in: tmp)
            try cache.put("big", bytes: CacheValues.random(count: 5000, seed: 2), in: tmp)
            try cache.succeed("put", ["small", "s"])
            try cache.succeed("rm", ["big"])
            #expect(try cache.get("big") == nil)
            #expect(try cache.valueFiles().isEmpty)
            try cache.succeed("rm", ["big"])
            try cache.succeed("rm", ["never-there"])
            #expect(try cache.get("small") == Array("s".utf8))
        }
    }

    @Test("ls lists KEY<TAB>SIZE<TAB>inline|file, least recently used first, and gets reorder it")
    func listOrder() throws {
        try TemporaryDirectory.with { tmp in
            let cache = Self.cache(in: tmp)
            try cache.succeed("put", ["a", "aaaa"])
            try cache.succeed("put", ["b", "bb"])
            try cache.put("c", bytes: CacheValues.random(count: 3000, seed: 3), in: tmp)
            #expect(try cache.succeed("ls").stdout == "a\t4\tinline\nb\t2\tinline\nc\t3000\tfile\n")
            _ = try cache.get("a")
            #expect(try cache.succeed("ls").stdout == "b\t2\tinline\nc\t3000\tfile\na\t4\tinline\n")
            _ = try cache.get("b")
            #expect(try cache.succeed("ls").stdout == "c\t3000\tfile\na\t4\tinline\nb\t2\tinline\n")
            #expect(try cache.get("missing") == nil)
            #expect(try cache.succeed("ls").stdout == "c\t3000\tfile\na\t4\tinline\nb\t2\tinline\n")
        }
    }

    /// Keys with every character `ls` escapes, stored in this order.
    static let awkwardKeys = ["tab\there", "line\nbreak", "carriage\rreturn", "back\\slash", "all\t\n\r\\\\n"]

    @Test("ls escapes backslash, tab, newline and carriage return in keys: one line of three fields each")
    func listEscapesKeys() throws {
        try TemporaryDirectory.with { tmp in
            let cache = Self.cache(in: tmp)
            for key in Self.awkwardKeys { try cache.succeed("put", [key, "v"]) }
            let expected = [
                #"tab\there"#, #"line\nbreak"#, #"carriage\rreturn"#, #"back\\slash"#, #"all\t\n\r\\\\n"#,
            ]
            let lines = try cache.succeed("ls").stdout.split(separator: "\n", omittingEmptySubsequences: false)
            #expect(lines == expected.map { Substring($0 + "\t1\tinline") } + [""])
            for key in Self.awkwardKeys { #expect(try cache.get(key) == Array("v".utf8), "\(key)") }
        }
    }

    @Test("ls --json prints one array of the entries, least recently used first, with the keys as they are")
    func listJSON() throws {
        try TemporaryDirectory.with { tmp in
            let cache = Self.cache(in: tmp)
            try cache.succeed("put", ["--ttl", "3600", Self.awkwardKeys[0], "aaaa"])
            try cache.put(Self.awkwardKeys[1], bytes: CacheValues.random(count: 3000, seed: 11), in: tmp)
            let result = try cache.succeed("ls", ["--json"])
            #expect(result.stdout.hasSuffix("]\n") && result.stdout.filter { $0 == "\n" }.count == 1, "\(result)")
            let entries = try #require(
                try JSONSerialization.jsonObject(with: result.stdoutData) as? [[String: Any]], "\(result)")
            try #require(entries.count == 2, "\(result)")
            #expect(entries.map { $0["key"] as? String } == Self.awkwardKeys.prefix(2).map { Optional($0) })
            #expect(entries.map { $0["size"] as? Int } == [4, 3000])
            #expect(entries.map { $0["storage"] as? String } == ["inline", "file"])
            let now = Int(Date().timeIntervalSince1970 * 1000)
            for entry in entries {
                let lastAccess = try #require(entry["lastAccess"] as? Int, "\(entry)")
                #expect(lastAccess > now - 600_000 && lastAccess <= now, "\(entry)")
            }
            let expiry = try #require(entries[0]["expiry"] as? Int, "\(entries[0])")
            #expect(expiry > now && expiry <= now + 3_600_000, "\(entries[0])")
            #expect(entries[1]["expiry"] is NSNull, "\(entries[1])")
            #expect(try cache.succeed("ls", ["--json"]).stdout == result.stdout, "listing counts no access")
        }
    }

    @Test("stats --json prints one object with the five counts")
    func statsJSON() throws {
        try TemporaryDirectory.with { tmp in
            let cache = Self.cache(in: tmp)
            try cache.succeed("put", ["a", "aaaa"])
            try cache.put("b", bytes: CacheValues.random(count: 1000, seed: 4), in: tmp)
            let result = try cache.succeed("stats", ["--json"])
            #expect(result.stdout == #"{"bytes":1004,"count":2,"files":1,"inline":1,"orphans":0}"# + "\n", "\(result)")
        }
    }

    @Test("stats prints count, bytes, inline, files and orphans")
    func stats() throws {
        try TemporaryDirectory.with { tmp in
            let cache = Self.cache(in: tmp)
            try cache.succeed("put", ["a", "aaaa"])
            try cache.put("b", bytes: CacheValues.random(count: 1000, seed: 4), in: tmp)
            try cache.put("c", bytes: CacheValues.random(count: 2000, seed: 5), in: tmp)
            let result = try cache.succeed("stats")
            #expect(result.stdout == "count 3\nbytes 3004\ninline 1\nfiles 2\norphans 0\n", "\(result)")
        }
    }

    @Test("trim --count-limit keeps the most recently used entries and deletes the others' files")
    func trimToCount() throws {
        try TemporaryDirectory.with { tmp in
            let cache = Self.cache(in: tmp)
            for (index, key) in ["k0", "k1", "k2", "k3", "k4"].enumerated() {
                try cache.put(key, bytes: CacheValues.random(count: 500 + index, seed: UInt64(index)), in: tmp)
            }
            _ = try cache.get("k0")
            let trim = try cache.succeed("trim", ["--count-limit", "2"])
            #expect(trim.stdoutData.isEmpty, "\(trim)")
            #expect(try cache.succeed("ls").stdout == "k4\t504\tfile\nk0\t500\tfile\n")
            #expect(try cache.stats() == ["count": 2, "bytes": 1004, "inline": 0, "files": 2, "orphans": 0])
            #expect(try cache.valueFiles().count == 2)
            try cache.succeed("trim", ["--count-limit", "0"])
            #expect(try cache.succeed("ls").stdout == "")
            #expect(try cache.valueFiles().isEmpty)
        }
    }

    @Test("put with limits trims before it returns; put without limits does not")
    func putAppliesLimits() throws {
        try TemporaryDirectory.with { tmp in
            let cache = Self.cache(in: tmp)
            for key in ["a", "b", "c"] { try cache.succeed("put", [key, "12345"]) }
            try cache.succeed("put", ["--count-limit", "2", "d", "12345"])
            #expect(try cache.succeed("ls").stdout == "c\t5\tinline\nd\t5\tinline\n")
            try cache.succeed("put", ["--byte-limit", "7", "e", "123"])
            #expect(try cache.succeed("ls").stdout == "e\t3\tinline\n")
            try cache.succeed("put", ["f", "123456789"])
            #expect(try cache.stats()["count"] == 2, "a put without limits keeps everything")
        }
    }

    @Test("an entry past its --ttl is a miss and not listed, and trim removes it")
    func timeToLive() throws {
        try TemporaryDirectory.with { tmp in
            let cache = Self.cache(in: tmp)
            // 1 ms: long gone by the time the next process has started.
            try cache.put("brief", bytes: CacheValues.random(count: 500, seed: 9), in: tmp, ["--ttl", "0.001"])
            try cache.succeed("put", ["--ttl", "86400", "day", "d"])
            #expect(try cache.succeed("ls").stdout == "day\t1\tinline\n")
            #expect(try cache.stats()["count"] == 2, "an expired entry counts until it is trimmed")
            try cache.succeed("trim")
            #expect(try cache.stats() == ["count": 1, "bytes": 1, "inline": 1, "files": 0, "orphans": 0])
            #expect(try cache.get("brief") == nil)
            #expect(try cache.get("day") == Array("d".utf8))
        }
    }

    @Test("a --ttl or --age-limit too long to express is forever, not a crash", arguments: ["1e17", "1e30", "1e300"])
    func hugeTimes(seconds: String) throws {
        try TemporaryDirectory.with { tmp in
            let cache = Self.cache(in: tmp)
            try cache.succeed("put", ["--ttl", seconds, "--age-limit", seconds, "k", "v"])
            try cache.succeed("trim", ["--age-limit", seconds])
            #expect(try cache.get("k") == Array("v".utf8))
            #expect(try cache.succeed("ls").stdout == "k\t1\tinline\n")
        }
    }

    @Test("trim --age-limit drops entries not accessed that recently; --free-space-limit beyond the disk empties it")
    func trimToAgeAndFreeSpace() throws {
        try TemporaryDirectory.with { tmp in
            let cache = Self.cache(in: tmp)
            try cache.succeed("put", ["a", "1"])
            try cache.put("b", bytes: CacheValues.random(count: 600, seed: 10), in: tmp)
            try cache.succeed("trim", ["--age-limit", "3600", "--free-space-limit", "0"])
            #expect(try cache.stats()["count"] == 2)
            try cache.succeed("trim", ["--age-limit", "0"])
            #expect(try cache.stats()["count"] == 0, "every entry was last accessed before this process started")
            try cache.succeed("put", ["a", "1"])
            try cache.put("b", bytes: CacheValues.random(count: 600, seed: 10), in: tmp)
            try cache.succeed("trim", ["--free-space-limit", "\(Int.max)"])
            #expect(try cache.stats() == ["count": 0, "bytes": 0, "inline": 0, "files": 0, "orphans": 0])
            #expect(try cache.valueFiles().isEmpty)
        }
    }

    @Test("trim deletes an orphan file; afterwards stats shows orphans 0 and verify is clean")
    func trimCollectsOrphans() throws {
        try TemporaryDirectory.with { tmp in
            let cache = Self.cache(in: tmp)
            try cache.put("k", bytes: CacheValues.random(count: 800, seed: 6), in: tmp)
            let orphan = "0123456789abcdef0123456789abcdef"
            try Data([1, 2, 3]).write(to: URL(fileURLWithPath: cache.dir + "/files/" + orphan))
            #expect(try cache.stats()["orphans"] == 1)
            let verify = try cache.run("verify")
            #expect(verify.exitedNormally && verify.status == 4, "\(verify)")
            #expect(verify.stdout == "files/\(orphan): no entry records this file\n", "\(verify)")
            try cache.succeed("trim")
            #expect(try cache.stats() == ["count": 1, "bytes": 800, "inline": 0, "files": 1, "orphans": 0])
            #expect(try cache.succeed("verify").stdout == "")
            #expect(try cache.get("k") == CacheValues.random(count: 800, seed: 6))
        }
    }

    @Test("verify is clean, then exits 1 on a damaged file, --repair drops it and verify is clean again")
    func verifyAndRepair() throws {
        try TemporaryDirectory.with { tmp in
            let cache = Self.cache(in: tmp)
            let kept = CacheValues.random(count: 900, seed: 7)
            try cache.put("damaged", bytes: CacheValues.random(count: 1200, seed: 8), in: tmp)
            try cache.put("kept", bytes: kept, in: tmp)
            try cache.succeed("put", ["inline", "tiny"])
            let clean = try cache.succeed("verify")
            #expect(clean.stdoutData.isEmpty && clean.stderrData.isEmpty, "\(clean)")

            // Damage the last byte of the damaged entry's file (the larger one).
            let name = try #require(
                try cache.valueFiles().first { name in
                    let size = try FileManager.default.attributesOfItem(atPath: cache.dir + "/files/" + name)[.size]
                    return (size as? Int ?? 0) > 1200
                })
            let path = cache.dir + "/files/" + name
            var bytes = try Data(contentsOf: URL(fileURLWithPath: path))
            bytes[bytes.count - 1] ^= 0xFF
            try bytes.write(to: URL(fileURLWithPath: path))

            let problem = "damaged: the file \(name) is missing, short or fails its CRC\n"
            let damaged = try cache.run("verify")
            #expect(damaged.exitedNormally && damaged.status == 4 && damaged.stdout == problem, "\(damaged)")
            let repair = try cache.succeed("verify", ["--repair"])
            #expect(repair.stdout == problem, "\(repair)")
            let again = try cache.succeed("verify")
            #expect(again.stdoutData.isEmpty, "\(again)")
            #expect(try cache.get("damaged") == nil)
            #expect(try cache.get("kept") == kept)
            #expect(try cache.get("inline") == Array("tiny".utf8))
            #expect(try cache.stats() == ["count": 2, "bytes": 904, "inline": 1, "files": 1, "orphans": 0])
        }
    }
}
