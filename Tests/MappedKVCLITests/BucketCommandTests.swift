import Foundation
import MappedKV
import MappedKVCollections
import MappedKVProcessTestSupport
import Testing

/// `mappedkv bucket`: the exact lines scripts depend on, and collection stores shared by processes.
@Suite("bucket commands", .serialized)
struct BucketCommandTests {
    static func store(_ root: String, _ id: String = "feed") -> [String] { CLI.store(root, id) }

    static func object(_ line: Substring) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
    }

    @Test("put and get: one JSON line with bucket, key, value, typed metadata and ISO 8601 times")
    func putGet() throws {
        try TemporaryDirectory.with { tmp in
            let store = Self.store(tmp.path("root"))
            let missing = try CLI.run(["bucket", "put"] + store + ["posts", "1000", "{}"])
            #expect(missing.status == 3 && missing.stderr.contains("--create"), "\(missing)")
            try CLI.succeed(
                ["bucket", "put", "--create"] + store
                    + [
                        "posts", "1000", #"{"title": "Hello", "likes": 5}"#, "--meta",
                        "downloaded=2026-01-02T03:04:05Z",
                        "--meta", "rank=3", "--meta", "score=1.5", "--meta", "source=api",
                    ])
            let get = try CLI.succeed(["bucket", "get"] + store + ["posts", "1000"])
            let lines = get.stdout.split(separator: "\n")
            #expect(lines.count == 1)
            #expect(get.stdout.hasPrefix(#"{"bucket":"posts","key":"1000","value":{"likes":5,"title":"Hello"},"#))
            let object = try Self.object(lines[0])
            let meta = try #require(object["meta"] as? [String: Any])
            #expect(meta["downloaded"] as? String == "2026-01-02T03:04:05.000Z")
            #expect(meta["rank"] as? Int == 3 && meta["score"] as? Double == 1.5 && meta["source"] as? String == "api")
            let created = try #require(object["created"] as? String)
            #expect(
                try Date.ISO8601FormatStyle(includingFractionalSeconds: true).parse(created).timeIntervalSinceNow > -600
            )
            #expect(object["modified"] as? String == created)

            let absent = try CLI.run(["bucket", "get"] + store + ["posts", "999"])
            #expect(absent.status == 1 && absent.stdout.isEmpty, "\(absent)")
            let notJSON = try CLI.run(["bucket", "put"] + store + ["posts", "1", "{oops"])
            #expect(notJSON.status == 64, "\(notJSON)")
            try CLI.succeed(["bucket", "rm"] + store + ["posts", "1000"])
            #expect(try CLI.run(["bucket", "rm"] + store + ["posts", "1000"]).status == 1)
            #expect(try CLI.succeed(["bucket", "ls"] + store + ["posts"]).stdout.isEmpty)
        }
    }

    @Test("index add, index ls, query with where, order, limit, cursor and count")
    func indexesAndQueries() throws {
        try TemporaryDirectory.with { tmp in
            let store = Self.store(tmp.path("root"))
            for number in 0..<12 {
                try CLI.succeed(
                    ["bucket", "put", "--create"] + store
                        + [
                            "posts", String(format: "p%02d", number),
                            #"{"likes": \#(number * 7 % 12), "tag": "t\#(number % 3)"}"#,
                        ])
            }
            try CLI.succeed(["bucket", "index", "add"] + store + ["posts", "likes", "int", "value.likes"])
            try CLI.succeed(["bucket", "index", "add"] + store + ["posts", "tag", "string", "value.tag"])
            try CLI.succeed(["bucket", "index", "add"] + store + ["posts", "made", "date", "created"])
            #expect(
                try CLI.succeed(["bucket", "index", "ls"] + store).stdout
                    == "posts\tlikes\tint\tvalue.likes\nposts\tmade\tdate\tcreated\nposts\ttag\tstring\tvalue.tag\n")
            let duplicate = try CLI.run(
                ["bucket", "index", "add"] + store + ["posts", "tagged", "string", "value.tag", "--unique"])
            #expect(duplicate.status == 2 && duplicate.stderr.contains("unique"), "\(duplicate)")

            var keys: [String] = []
            var after: [String] = []
            for _ in 0..<5 {
                let page = try CLI.succeed(
                    ["bucket", "query"] + store
                        + ["posts", "--where", "likes", ">=", "3", "--order", "likes", "--desc", "--limit", "3"] + after
                )
                var lines = page.stdout.split(separator: "\n")
                if let last = lines.last, last.hasPrefix("#cursor\t") {
                    after = ["--after", String(last.dropFirst("#cursor\t".count))]
                    lines.removeLast()
                } else {
                    after = []
                }
                keys += try lines.map { try Self.object($0)["key"] as? String ?? "" }
                if after.isEmpty { break }
            }
            // likes = n*7 % 12: the keys with likes >= 3, by likes descending.
            let pairs: [(likes: Int, key: String)] = (0..<12).map { ($0 * 7 % 12, String(format: "p%02d", $0)) }
            let matching = pairs.filter { $0.likes >= 3 }
            let sorted = matching.sorted { (a, b) -> Bool in
                a.likes != b.likes ? a.likes > b.likes : a.key > b.key
            }
            let expected: [String] = sorted.map(\.key)
            #expect(keys == expected)
            let count = try CLI.succeed(
                ["bucket", "query"] + store + ["posts", "--where", "likes", ">=", "3", "--count"])
            #expect(count.stdout == "\(expected.count)\n")
            let tagged = try CLI.succeed(
                ["bucket", "query"] + store + [
                    "posts", "--where", "tag", "in", "t0,t2", "--where", "likes", "<", "6", "--count",
                ])
            let manual = (0..<12).filter { ($0 % 3 == 0 || $0 % 3 == 2) && $0 * 7 % 12 < 6 }.count
            #expect(tagged.stdout == "\(manual)\n")
            let unknown = try CLI.run(["bucket", "query"] + store + ["posts", "--order", "height"])
            #expect(unknown.status == 2 && unknown.stderr.contains("no index"), "\(unknown)")
        }
    }

    @Test("export then import into another store gives the same lines; a plain store is refused")
    func exportImport() throws {
        try TemporaryDirectory.with { tmp in
            let root = tmp.path("root")
            for (bucket, key) in [("a:b", "c"), ("a", "b:c"), ("posts", "1")] {
                try CLI.succeed(
                    ["bucket", "put", "--create"] + Self.store(root) + [
                        bucket, key, #"{"k": "\#(key)"}"#, "--meta", "n=1.0",
                    ])
            }
            let exported = try CLI.succeed(["bucket", "export"] + Self.store(root)).stdout
            #expect(exported.split(separator: "\n").count == 3)
            let imported = try CLI.succeed(
                ["bucket", "import", "--create"] + Self.store(root, "copy"), stdin: exported)
            #expect(imported.stdout == "imported 3 entries\n")
            #expect(try CLI.succeed(["bucket", "export"] + Self.store(root, "copy")).stdout == exported)
            #expect(try CLI.succeed(["bucket", "export"] + Self.store(root) + ["a"]).stdout.contains(#""key":"b:c""#))

            try CLI.succeed(["set", "--create"] + Self.store(root, "plain") + ["k", "v"])
            let refused = try CLI.run(["bucket", "ls"] + Self.store(root, "plain") + ["posts"])
            #expect(refused.status == 2 && refused.stderr.contains("plain keys"), "\(refused)")
            let plainRead = try CLI.run(["dump"] + Self.store(root))
            #expect(plainRead.status == 2 && plainRead.stderr.contains("'mappedkv.collections' store"), "\(plainRead)")
        }
    }

    @Test("a reader process's query results are always a state the writer had")
    func readerSeesWriterStates() throws {
        try TemporaryDirectory.with { tmp in
            let root = tmp.path("root")
            let store = Self.store(root) + ["--multi-process"]
            // Every writer state: the keys k0...k9 all at one generation (each import is one write).
            func generation(_ number: Int) -> String {
                (0..<10).map { #"{"bucket":"b","key":"k\#($0)","value":{"gen":\#(number)},"meta":{}}"# }
                    .joined(separator: "\n") + "\n"
            }
            try CLI.succeed(["bucket", "import", "--create"] + store, stdin: generation(0))
            try CLI.succeed(["bucket", "index", "add"] + store + ["b", "gen", "int", "value.gen"])
            let script = (1...40).map { number in
                "printf '%s' '\(generation(number))' | \"$0\" bucket import --root '\(root)' --id feed --multi-process >/dev/null"
            }.joined(separator: " && ")
            let writer = Process()
            writer.executableURL = URL(fileURLWithPath: "/bin/sh")
            writer.arguments = ["-c", script, try CLI.binary.get().path]
            try writer.run()

            let collections = try CollectionStore(
                id: "feed", directory: root, configuration: Configuration(isMultiProcess: true))
            defer { collections.close() }
            let bucket = collections.bucket("b", serializer: RawEntrySerializer())
            var states: Set<Int64> = []
            var queries = 0
            repeat {
                let page = try bucket.query(Query(where: [.greaterOrEqual("gen", .int(0))], orderBy: "gen"))
                let generations = Set(page.entries.map { String(decoding: $0.value, as: UTF8.self) })
                #expect(page.entries.count == 10 && generations.count == 1, "a mixed state: \(generations)")
                if let first = page.entries.first?.value,
                    let gen = (try? JSONSerialization.jsonObject(with: Data(first)) as? [String: Int])?["gen"]
                {
                    states.insert(Int64(gen))
                }
                queries += 1
            } while writer.isRunning
            writer.waitUntilExit()
            #expect(writer.terminationStatus == 0)
            let final = try bucket.query(Query(where: [.equal("gen", .int(40))]))
            #expect(final.entries.count == 10, "the reader follows the writer to its last state")
            print("reader: \(queries) queries saw \(states.count) writer states")
        }
    }

    @Test("a writer killed mid-import leaves whole batches, each entry's metadata and index matching its value")
    func killedWriter() throws {
        try TemporaryDirectory.with { tmp in
            let root = tmp.path("root")
            let store = Self.store(root) + ["--multi-process"]
            try CLI.succeed(["bucket", "index", "add", "--create"] + store + ["b", "n", "int", "value.n"])
            let lines =
                (0..<20_000).map { #"{"bucket":"b","key":"k\#($0)","value":{"n":\#($0)},"meta":{"n":\#($0)}}"# }
                .joined(separator: "\n") + "\n"
            let input = tmp.path("lines.jsonl")
            try lines.write(toFile: input, atomically: true, encoding: .utf8)
            let writer = Process()
            writer.executableURL = try CLI.binary.get()
            writer.arguments = ["bucket", "import"] + store
            writer.standardInput = try FileHandle(forReadingFrom: URL(fileURLWithPath: input))
            writer.standardOutput = FileHandle.nullDevice
            try writer.run()
            // Kill it once it has written something, at whatever point it has reached.
            let collections = try CollectionStore(
                id: "feed", directory: root, configuration: Configuration(isMultiProcess: true))
            defer { collections.close() }
            let bucket = collections.bucket("b", serializer: RawEntrySerializer())
            while writer.isRunning, try bucket.count(where: []) == 0 {}
            kill(writer.processIdentifier, SIGKILL)
            writer.waitUntilExit()

            #expect(writer.terminationReason == .uncaughtSignal, "the writer finished before it was killed")
            let entries = try bucket.entries()
            #expect(entries.count % 1_000 == 0, "\(entries.count) entries: a batch was torn")
            for entry in entries {
                let value = try #require(try JSONSerialization.jsonObject(with: Data(entry.value)) as? [String: Int])
                #expect(entry.metadata["n"] == .int(Int64(value["n"] ?? -1)) && entry.key == "k\(value["n"] ?? -1)")
            }
            #expect(try bucket.count(where: [.greaterOrEqual("n", .int(0))]) == entries.count)
            print("killed writer: \(entries.count) of 20000 entries, in whole batches")
        }
    }

    @Test("a put keeps the creation time of an indexed entry, loaded at open or written since by another process")
    func putKeepsCreatedTime() throws {
        try TemporaryDirectory.with { tmp in
            let root = tmp.path("root")
            let store = Self.store(root) + ["--multi-process"]
            let old = "2001-02-03T04:05:06.000Z"
            func line(_ key: String) -> String {
                #"{"bucket":"posts","key":"\#(key)","value":{"likes":1},"meta":{},"created":"\#(old)","modified":"\#(old)"}"#
                    + "\n"
            }
            try CLI.succeed(["bucket", "import", "--create"] + store, stdin: line("before"))
            try CLI.succeed(["bucket", "index", "add"] + store + ["posts", "likes", "int", "value.likes"])
            let collections = try CollectionStore(
                id: "feed", directory: root, configuration: Configuration(isMultiProcess: true))
            defer { collections.close() }
            let posts = collections.bucket("posts", serializer: RawEntrySerializer())
            // Written by another process while this one has the bucket's indexes in memory.
            try CLI.succeed(["bucket", "import"] + store, stdin: line("since"))
            let created = try Date.ISO8601FormatStyle(includingFractionalSeconds: true).parse(old)
            for key in ["before", "since"] {
                try posts.put(Array(#"{"likes":2}"#.utf8), forKey: key)
                let entry = try #require(try posts.entry(forKey: key))
                #expect(entry.created == created, "\(key): created \(entry.created)")
                #expect(entry.modified > created)
            }
            try posts.put(Array(#"{"likes":3}"#.utf8), forKey: "new")
            #expect(try posts.entry(forKey: "new").map { $0.created == $0.modified } == true)
            #expect(try posts.count(where: [.greaterOrEqual("likes", .int(2))]) == 3)
        }
    }
}
