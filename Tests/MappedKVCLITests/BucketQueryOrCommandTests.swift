import Foundation
import MappedKVProcessTestSupport
import Testing

// `mappedkv bucket query` with != and --or groups: the keys and counts a script reads, and the
// errors for an --or with no group on one side of it and for an unknown operator.

@Suite("bucket query: != and --or", .serialized)
struct BucketQueryOrCommandTests {
    /// A store of posts p00 to p11 with likes = n * 7 % 12 and tag "t(n % 3)", both indexed.
    static func fill(_ store: [String]) throws {
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
    }

    static func keys(_ output: String) throws -> [String] {
        try output.split(separator: "\n").filter { !$0.hasPrefix("#") }.map { line in
            let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            return try #require(object["key"] as? String)
        }
    }

    static func key(_ number: Int) -> String { String(format: "p%02d", number) }

    @Test("!= and --or select, order, page and count as the library does")
    func notEqualAndOr() throws {
        try TemporaryDirectory.with { tmp in
            let store = CLI.store(tmp.path("root"), "feed")
            try Self.fill(store)
            let notT1 = try CLI.succeed(["bucket", "query"] + store + ["posts", "--where", "tag", "!=", "t1"])
            let untagged = Array(0..<12).filter { number in number % 3 != 1 }.map(Self.key)
            #expect(try Self.keys(notT1.stdout) == untagged)

            // likes = 0 OR (tag = t1 AND likes > 5)
            let groups = [
                "--where", "likes", "=", "0", "--or", "--where", "tag", "=", "t1", "--where", "likes", ">", "5",
            ]
            var matching: [Int] = []
            for number in 0..<12 where number * 7 % 12 == 0 || (number % 3 == 1 && number * 7 % 12 > 5) {
                matching.append(number)
            }
            #expect(matching == [0, 1, 10])
            let all = try CLI.succeed(["bucket", "query"] + store + ["posts"] + groups)
            #expect(try Self.keys(all.stdout) == matching.map(Self.key))
            let count = try CLI.succeed(["bucket", "query"] + store + ["posts"] + groups + ["--count"])
            #expect(count.stdout == "\(matching.count)\n")

            // Page by likes descending, two at a time, with the cursor lines.
            var keys: [String] = []
            var after: [String] = []
            for _ in 0..<10 {
                let page = try CLI.succeed(
                    ["bucket", "query"] + store + ["posts", "--order", "likes", "--desc", "--limit", "2"] + groups
                        + after)
                keys += try Self.keys(page.stdout)
                guard let last = page.stdout.split(separator: "\n").last, last.hasPrefix("#cursor\t") else { break }
                after = ["--after", String(last.dropFirst("#cursor\t".count))]
            }
            let byLikes = matching.sorted { ($0 * 7 % 12, Self.key($0)) > ($1 * 7 % 12, Self.key($1)) }
            #expect(keys == byLikes.map(Self.key))
        }
    }

    @Test("an --or with no group before or after it, and an unknown operator, are clear errors")
    func badInput() throws {
        try TemporaryDirectory.with { tmp in
            let store = CLI.store(tmp.path("root"), "feed")
            try Self.fill(store)
            let trailing = try CLI.run(["bucket", "query"] + store + ["posts", "--where", "likes", "=", "0", "--or"])
            #expect(trailing.status == 64 && trailing.stderr.contains("--or needs a group"), "\(trailing)")
            let leading = try CLI.run(["bucket", "query"] + store + ["posts", "--or", "--where", "likes", "=", "0"])
            #expect(leading.status == 64 && leading.stderr.contains("between groups"), "\(leading)")
            let doubled = try CLI.run(
                ["bucket", "query"] + store + [
                    "posts", "--where", "likes", "=", "0", "--or", "--or", "--where", "likes", "=", "1",
                ])
            #expect(doubled.status == 64 && doubled.stderr.contains("between groups"), "\(doubled)")
            let unknown = try CLI.run(["bucket", "query"] + store + ["posts", "--where", "likes", "<>", "0"])
            #expect(unknown.status == 64 && unknown.stderr.contains("!="), "\(unknown)")
            let missing = try CLI.run(
                ["bucket", "query"] + store + [
                    "posts", "--where", "likes", "=", "0", "--or", "--where", "height", "=", "1",
                ])
            #expect(missing.status == 2 && missing.stderr.contains("no index"), "\(missing)")
            // Nothing was changed by the refused queries.
            #expect(try CLI.succeed(["bucket", "query"] + store + ["posts", "--count"]).stdout == "12\n")
        }
    }
}
