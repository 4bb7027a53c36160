import Foundation
import MappedKV
import MappedKVCollections
import MappedKVProcessTestSupport
import Testing

/// `mappedkv bucket count`, `clear`, `index rm` and bytes metadata, and counts and removals seen
/// across processes: this test process holds the store open (indexes in memory) while `mappedkv`
/// processes write, and the other way round.
@Suite("bucket count, clear and index rm commands", .serialized)
struct BucketRemovalCommandTests {
    static func store(_ root: String, _ id: String = "feed") -> [String] { CLI.store(root, id) + ["--multi-process"] }

    static func count(_ store: [String], _ bucket: String) throws -> Int? {
        Int(try CLI.succeed(["bucket", "count"] + store + [bucket]).stdout.dropLast())
    }

    @Test("count prints the number, clear empties a bucket and keeps its indexes, index rm drops one")
    func commands() throws {
        try TemporaryDirectory.with { tmp in
            let store = Self.store(tmp.path("root"))
            for number in 0..<6 {
                try CLI.succeed(["bucket", "put", "--create"] + store + ["posts", "p\(number)", #"{"n":\#(number)}"#])
            }
            try CLI.succeed(["bucket", "put"] + store + ["posts", "p0", #"{"n":10}"#])
            try CLI.succeed(["bucket", "put"] + store + ["other", "x", "1"])
            #expect(try CLI.succeed(["bucket", "count"] + store + ["posts"]).stdout == "6\n")
            #expect(try CLI.succeed(["bucket", "count"] + store + ["empty"]).stdout == "0\n")
            try CLI.succeed(["bucket", "index", "add"] + store + ["posts", "n", "int", "value.n", "--unique"])
            try CLI.succeed(["bucket", "index", "add"] + store + ["posts", "m", "int", "value.n"])

            #expect(try CLI.succeed(["bucket", "clear"] + store + ["posts"]).stdout == "removed 6 entries\n")
            #expect(try Self.count(store, "posts") == 0 && Self.count(store, "other") == 1)
            #expect(try CLI.succeed(["bucket", "ls"] + store + ["posts"]).stdout.isEmpty)
            #expect(
                try CLI.succeed(["bucket", "index", "ls"] + store).stdout
                    == "posts\tm\tint\tvalue.n\nposts\tn\tint\tvalue.n\tunique\n")
            try CLI.succeed(["bucket", "put"] + store + ["posts", "a", #"{"n":1}"#])
            let duplicate = try CLI.run(["bucket", "put"] + store + ["posts", "b", #"{"n":1}"#])
            #expect(duplicate.status == 2 && duplicate.stderr.contains("unique"), "the kept index binds: \(duplicate)")

            try CLI.succeed(["bucket", "index", "rm"] + store + ["posts", "n"])
            #expect(try CLI.succeed(["bucket", "index", "ls"] + store).stdout == "posts\tm\tint\tvalue.n\n")
            try CLI.succeed(["bucket", "put"] + store + ["posts", "b", #"{"n":1}"#])
            let query = try CLI.succeed(["bucket", "query"] + store + ["posts", "--where", "m", "=", "1", "--count"])
            #expect(query.stdout == "2\n")
            let unknown = try CLI.run(["bucket", "index", "rm"] + store + ["posts", "n"])
            #expect(unknown.status == 2 && unknown.stderr.contains("no index"), "\(unknown)")
            #expect(try CLI.succeed(["bucket", "clear"] + store + ["none"]).stdout == "removed 0 entries\n")
            let missing = try CLI.run(["bucket", "count"] + Self.store(tmp.path("nothing")) + ["posts"])
            #expect(missing.status == 3, "\(missing)")
        }
    }

    @Test("bytes metadata prints as {\"base64\":..} and survives export and import")
    func bytesMetadata() throws {
        try TemporaryDirectory.with { tmp in
            let root = tmp.path("root")
            let store = CLI.store(root, "feed")
            try CLI.succeed(
                ["bucket", "put", "--create"] + store
                    + ["b", "k", "{}", "--meta-bytes", "blob=AAEC/4A=", "--meta", "s=AAEC/4A="])
            let line = try CLI.succeed(["bucket", "get"] + store + ["b", "k"]).stdout
            #expect(line.contains(#""meta":{"blob":{"base64":"AAEC/4A="},"s":"AAEC/4A="}"#), "\(line)")
            let exported = try CLI.succeed(["bucket", "export"] + store).stdout
            try CLI.succeed(["bucket", "import", "--create"] + CLI.store(root, "copy"), stdin: exported)
            let copy = try CollectionStore(id: "copy", directory: root)
            defer { copy.close() }
            let entry = try #require(try copy.bucket("b", serializer: RawEntrySerializer()).entry(forKey: "k"))
            #expect(entry.metadata == ["blob": .bytes([0, 1, 2, 0xFF, 0x80]), "s": .string("AAEC/4A=")])

            let bad = try CLI.run(["bucket", "put"] + store + ["b", "k", "{}", "--meta-bytes", "blob=not base64!"])
            #expect(bad.status == 64, "\(bad)")
            let badLine = #"{"bucket":"b","key":"k","value":1,"meta":{"x":{"base64":"%%"}}}"# + "\n"
            let refused = try CLI.run(["bucket", "import"] + store, stdin: badLine)
            #expect(refused.status != 0 && refused.stderr.contains("base64"), "\(refused)")
        }
    }

    @Test("counts, clears and index removals made by one process are what the other sees")
    func twoProcesses() throws {
        try TemporaryDirectory.with { tmp in
            let root = tmp.path("root")
            let store = Self.store(root)
            try CLI.succeed(["bucket", "index", "add", "--create"] + store + ["b", "n", "int", "value.n", "--unique"])
            let collections = try CollectionStore(
                id: "feed", directory: root, configuration: Configuration(isMultiProcess: true))
            defer { collections.close() }
            let bucket = collections.bucket("b", serializer: RawEntrySerializer())
            #expect(try bucket.indexDefinitions().map(\.name) == ["n"])
            for number in 0..<5 { try bucket.put(Array(#"{"n":\#(number)}"#.utf8), forKey: "k\(number)") }

            // The other process sees this one's puts and removes, and this one sees the other's.
            #expect(try Self.count(store, "b") == 5)
            try CLI.succeed(["bucket", "put"] + store + ["b", "k9", #"{"n":9}"#])
            try CLI.succeed(["bucket", "put"] + store + ["b", "k0", #"{"n":10}"#])
            try CLI.succeed(["bucket", "rm"] + store + ["b", "k1"])
            #expect(try bucket.count == 5 && bucket.count(where: [.greaterOrEqual("n", .int(0))]) == 5)
            #expect(try bucket.remove("k2"))
            #expect(try Self.count(store, "b") == 4)

            // The other process removes the unique index: this one stops enforcing and listing it.
            try CLI.succeed(["bucket", "index", "rm"] + store + ["b", "n"])
            #expect(try bucket.indexDefinitions().isEmpty)
            try bucket.put(Array(#"{"n":9}"#.utf8), forKey: "k3")
            #expect(throws: CollectionError.unknownIndex(bucket: "b", name: "n")) {
                _ = try bucket.count(where: [.equal("n", .int(9))])
            }

            // A clear by the other process: this one's count and queries see an empty bucket;
            // the definitions added since stay and index what this process puts next.
            try CLI.succeed(["bucket", "index", "add"] + store + ["b", "m", "int", "value.n"])
            #expect(try CLI.succeed(["bucket", "clear"] + store + ["b"]).stdout == "removed 4 entries\n")
            #expect(try bucket.count == 0 && bucket.keys().isEmpty)
            #expect(try bucket.count(where: [.greaterOrEqual("m", .int(0))]) == 0)
            try bucket.put(Array(#"{"n":1}"#.utf8), forKey: "new")
            #expect(try bucket.count(where: [.equal("m", .int(1))]) == 1)
            #expect(try Self.count(store, "b") == 1)

            // This process removes the bucket: the other finds no entry, index or count.
            #expect(try collections.removeBucket("b") == 1)
            #expect(try Self.count(store, "b") == 0)
            #expect(try CLI.succeed(["bucket", "index", "ls"] + store).stdout.isEmpty)
            #expect(try CLI.succeed(["bucket", "ls"] + store + ["b"]).stdout.isEmpty)
        }
    }

    @Test("a writer killed while importing leaves a count that matches the entries and the index; clear empties")
    func killedWriter() throws {
        try TemporaryDirectory.with { tmp in
            let root = tmp.path("root")
            let store = Self.store(root)
            try CLI.succeed(["bucket", "index", "add", "--create"] + store + ["b", "n", "int", "value.n"])
            let lines =
                (0..<20_000).map { #"{"bucket":"b","key":"k\#($0)","value":{"n":\#($0)},"meta":{}}"# }
                .joined(separator: "\n") + "\n"
            let input = tmp.path("lines.jsonl")
            try lines.write(toFile: input, atomically: true, encoding: .utf8)
            let collections = try CollectionStore(
                id: "feed", directory: root, configuration: Configuration(isMultiProcess: true))
            defer { collections.close() }
            let bucket = collections.bucket("b", serializer: RawEntrySerializer())
            var kills = 0
            for round in 0..<4 {
                let writer = Process()
                writer.executableURL = try CLI.binary.get()
                writer.arguments = ["bucket", "import"] + store
                writer.standardInput = try FileHandle(forReadingFrom: URL(fileURLWithPath: input))
                writer.standardOutput = FileHandle.nullDevice
                try writer.run()
                // Kill it at a different point each round: once it has written 1 to 4 batches.
                while writer.isRunning, try bucket.count < 1_000 * (round + 1) {}
                kill(writer.processIdentifier, SIGKILL)
                writer.waitUntilExit()
                if writer.terminationReason == .uncaughtSignal { kills += 1 }
                let keys = try bucket.keys()
                let count = try bucket.count
                #expect(count == keys.count, "round \(round): count \(count), \(keys.count) keys")
                #expect(count % 1_000 == 0, "round \(round): \(count) entries, a batch was torn")
                #expect(try bucket.count(where: [.greaterOrEqual("n", .int(0))]) == keys.count)
                #expect(try CLI.succeed(["bucket", "count"] + store + ["b"]).stdout == "\(count)\n")
                #expect(try CLI.succeed(["bucket", "clear"] + store + ["b"]).stdout == "removed \(count) entries\n")
                #expect(try bucket.count == 0 && bucket.count(where: [.greaterOrEqual("n", .int(0))]) == 0)
            }
            #expect(kills > 0, "the writer always finished before it was killed")
            print("killed importer: \(kills) of 4 rounds killed, counts matched the entries")
        }
    }
}
