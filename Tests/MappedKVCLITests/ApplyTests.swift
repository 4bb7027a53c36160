import Foundation
import MappedKVProcessTestSupport
import Testing

/// `mappedkv apply`: the script language and its error handling.
@Suite("apply")
struct ApplyTests {
    /// Scripts whose third line is bad, with a word the error message must contain.
    static let badThirdLines: [(line: String, mentions: String)] = [
        ("set-int32 k notanumber", "notanumber"),
        ("set-int32 k 2147483648", "2147483648"),  // out of Int32 range
        ("set-uint32 k -1", "-1"),
        ("set-bool k maybe", "maybe"),
        ("frobnicate k v", "frobnicate"),  // unknown operation
        ("set-int32 k", "VALUE"),  // missing value
        ("set-string k", "VALUE"),  // missing value
        ("set-int32", "KEY"),  // missing key
        ("set-bytes k zz", "zz"),  // bad hex
        ("set-bytes k abc", "abc"),  // odd number of hex digits
        ("remove a b", "remove"),  // too many arguments
        ("clear now", "clear"),
        ("incr-int64 k x", "x"),
    ]

    @Test(
        "a bad third line stops the run: non-zero exit, 'line 3' on stderr, lines 1-2 applied",
        arguments: badThirdLines.map(\.line))
    func badThirdLine(_ badLine: String) throws {
        let mentions = Self.badThirdLines.first { $0.line == badLine }!.mentions
        try TemporaryDirectory.with { tmp in
            let root = tmp.path("root")
            let script = "set-int32 one 1\nset-string two zwei\n\(badLine)\nset-int32 four 4\n"
            let result = try CLI.fail(["apply", "--create"] + CLI.store(root, "s"), stdin: script)
            #expect(result.status == 2)
            #expect(result.stderr.contains("line 3"), "\(result)")
            #expect(result.stderr.contains(mentions), "\(result)")
            #expect(!result.stderr.contains("line 1") && !result.stderr.contains("line 2"))
            // Lines 1 and 2 stay applied; nothing after the bad line is.
            let dump = try CLI.dump(root: root, id: "s")
            #expect(dump == "one\t01\ntwo\t047a776569\n#count\t2\n")
            #expect(try CLI.succeed(["get", "--type", "int32"] + CLI.store(root, "s") + ["one"]).stdout == "1\n")
            #expect(try CLI.succeed(["get", "--type", "string"] + CLI.store(root, "s") + ["two"]).stdout == "zwei\n")
            try CLI.fail(["get"] + CLI.store(root, "s") + ["four"])
            try CLI.fail(["get"] + CLI.store(root, "s") + ["k"])
        }
    }

    @Test("blank lines are skipped but counted in the line number")
    func blankLinesCount() throws {
        try TemporaryDirectory.with { tmp in
            let root = tmp.path("root")
            let result = try CLI.fail(
                ["apply", "--create"] + CLI.store(root, "s"), stdin: "set-int32 a 1\n\n   \nbogus\n")
            #expect(result.stderr.contains("line 4"), "\(result)")
            #expect(try CLI.dump(root: root, id: "s") == "a\t01\n#count\t1\n")
        }
    }

    @Test("an empty script succeeds and leaves an empty store")
    func emptyScript() throws {
        try TemporaryDirectory.with { tmp in
            let root = tmp.path("root")
            try CLI.succeed(["apply", "--create"] + CLI.store(root, "s"), stdin: "")
            #expect(try CLI.dump(root: root, id: "s") == "#count\t0\n")
        }
    }

    @Test("removing an absent key is not an error")
    func removeAbsentKey() throws {
        try TemporaryDirectory.with { tmp in
            let root = tmp.path("root")
            try CLI.succeed(
                ["apply", "--create"] + CLI.store(root, "s"),
                stdin: "remove nothing\nset-int32 a 1\nremove nothing\nremove a\nremove a\n")
            #expect(try CLI.dump(root: root, id: "s") == "#count\t0\n")
        }
    }

    @Test("incr-int64 on an absent key starts at 0 and accumulates, also across runs")
    func incrementInt64() throws {
        try TemporaryDirectory.with { tmp in
            let root = tmp.path("root")
            let get = ["get", "--type", "int64"] + CLI.store(root, "s") + ["n"]
            try CLI.succeed(["apply", "--create"] + CLI.store(root, "s"), stdin: "incr-int64 n 5\n")
            #expect(try CLI.succeed(get).stdout == "5\n")
            try CLI.succeed(["apply", "--create"] + CLI.store(root, "s"), stdin: "incr-int64 n 10\nincr-int64 n -3\n")
            #expect(try CLI.succeed(get).stdout == "12\n")
            try CLI.succeed(["apply", "--create"] + CLI.store(root, "s"), stdin: "incr-int64 m -7\n")
            #expect(try CLI.succeed(["get", "--type", "int64"] + CLI.store(root, "s") + ["m"]).stdout == "-7\n")
            // varint of 12 is 0c; of -7 (as a 64-bit two's complement varint) f9ffffffffffffffff01.
            #expect(try CLI.dump(root: root, id: "s") == "m\tf9ffffffffffffffff01\nn\t0c\n#count\t2\n")
        }
    }

    @Test("incr-int64 that overflows Int64 fails with its line number and leaves the value")
    func incrementOverflow() throws {
        try TemporaryDirectory.with { tmp in
            let root = tmp.path("root")
            let result = try CLI.fail(
                ["apply", "--create"] + CLI.store(root, "s"), stdin: "set-int64 n 9223372036854775807\nincr-int64 n 1\n"
            )
            #expect(result.stderr.contains("line 2"), "\(result)")
            #expect(
                try CLI.succeed(["get", "--type", "int64"] + CLI.store(root, "s") + ["n"]).stdout
                    == "9223372036854775807\n")
        }
    }

    @Test("clear inside a script removes everything set before it")
    func clearInScript() throws {
        try TemporaryDirectory.with { tmp in
            let root = tmp.path("root")
            try CLI.succeed(
                ["apply", "--create"] + CLI.store(root, "s"),
                stdin: "set-int32 a 1\nset-string b bee\nclear\nset-int32 c 3\n")
            #expect(try CLI.dump(root: root, id: "s") == "c\t03\n#count\t1\n")
            try CLI.succeed(["apply", "--create"] + CLI.store(root, "s"), stdin: "clear\n")
            #expect(try CLI.dump(root: root, id: "s") == "#count\t0\n")
            try CLI.succeed(["verify"] + CLI.store(root, "s"))
        }
    }

    @Test("trim inside a script shrinks a grown file and keeps the live values")
    func trimInScript() throws {
        try TemporaryDirectory.with { tmp in
            let root = tmp.path("root")
            let filler = String(repeating: "x", count: 200)
            var grow = ""
            for i in 0..<200 { grow += "set-string key\(i) \(filler)\n" }
            try CLI.succeed(["apply", "--create"] + CLI.store(root, "s"), stdin: grow)
            let grown = try Int(#require(info(root)["fileSize"]))!
            #expect(grown > 4096 * 4, "200 values of 200 bytes should have grown the file")

            var shrink = ""
            for i in 2..<200 { shrink += "remove key\(i)\n" }
            shrink += "trim\nset-int32 after 9\n"
            try CLI.succeed(["apply", "--create"] + CLI.store(root, "s"), stdin: shrink)
            let trimmed = try Int(#require(info(root)["fileSize"]))!
            #expect(trimmed < grown, "trim left the file at \(trimmed) bytes (was \(grown))")

            let expectedValue = "c801" + String(repeating: "78", count: 200)  // varint(200) + "x" * 200
            #expect(
                try CLI.dump(root: root, id: "s")
                    == "after\t09\nkey0\t\(expectedValue)\nkey1\t\(expectedValue)\n#count\t3\n")
            try CLI.succeed(["verify"] + CLI.store(root, "s"))
        }
    }

    @Test("a string value is the rest of the line and keeps inner and trailing spaces")
    func stringKeepsSpaces() throws {
        try TemporaryDirectory.with { tmp in
            let root = tmp.path("root")
            try CLI.succeed(
                ["apply", "--create"] + CLI.store(root, "s"),
                stdin: "set-string k a b  c\nset-string t  lead and trail  \nset-string e \n")
            let get = ["get", "--type", "string"] + CLI.store(root, "s")
            #expect(try CLI.succeed(get + ["k"]).stdout == "a b  c\n")
            #expect(try CLI.succeed(get + ["t"]).stdout == " lead and trail  \n")
            #expect(try CLI.succeed(get + ["e"]).stdout == "\n")
            #expect(
                try CLI.dump(root: root, id: "s")
                    == "e\t00\nk\t06612062202063\nt\t11206c65616420616e6420747261696c2020\n#count\t3\n")
        }
    }

    @Test("each set-* operation stores MMKV's payload encoding")
    func everyOperationPayload() throws {
        try TemporaryDirectory.with { tmp in
            let root = tmp.path("root")
            let script = """
                set-int32 i32 -1
                set-uint32 u32 4294967295
                set-int64 i64 -9223372036854775808
                set-uint64 u64 0
                set-bool t true
                set-bool f false
                set-double d -0.5
                set-float fl 0.25
                set-string s ✓
                set-bytes by 00FFab
                set-bytes nob\u{20}

                """
            try CLI.succeed(["apply", "--create"] + CLI.store(root, "s"), stdin: script)
            #expect(
                try CLI.dump(root: root, id: "s") == """
                    by\t0300ffab
                    d\t000000000000e0bf
                    f\t00
                    fl\t0000803e
                    i32\tffffffffffffffffff01
                    i64\t80808080808080808001
                    nob\t00
                    s\t03e29c93
                    t\t01
                    u32\tffffffff0f
                    u64\t00
                    #count\t11

                    """)
        }
    }

    @Test("a bad line after a rekey reports its line number; the rekey and earlier lines stay applied")
    func rekeyThenBadLine() throws {
        try TemporaryDirectory.with { tmp in
            let root = tmp.path("root")
            let result = try CLI.fail(
                ["apply", "--create"] + CLI.store(root, "s"), stdin: "set-int32 a 1\nrekey secret\nset-int32 b x\n")
            #expect(result.stderr.contains("line 3"), "\(result)")
            #expect(
                try CLI.succeed(["dump"] + CLI.store(root, "s") + ["--crypt-key", "secret"]).stdout
                    == "a\t01\n#count\t1\n")
            try CLI.fail(["dump"] + CLI.store(root, "s"))
        }
    }

    private func info(_ root: String) throws -> [String: String] {
        TabSeparated.parse(try CLI.succeed(["info"] + CLI.store(root, "s")).stdout)
    }
}
