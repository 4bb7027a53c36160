import Foundation
import MappedKVProcessTestSupport
import Testing

/// `mappedkv get`, `set`, `remove` and `keys`.
@Suite("get, set, remove, keys")
struct CommandTests {
    /// A value given to `set --type T`, what `get --type T` prints back, and the stored payload.
    struct RoundTrip: Sendable, CustomTestStringConvertible {
        var type: String
        var input: String
        var output: String
        var payload: String
        var testDescription: String { "\(type) '\(input)'" }
    }

    static let roundTrips: [RoundTrip] = [
        RoundTrip(type: "bool", input: "true", output: "true", payload: "01"),
        RoundTrip(type: "bool", input: "false", output: "false", payload: "00"),
        RoundTrip(type: "int32", input: "-42", output: "-42", payload: "d6ffffffffffffffff01"),
        RoundTrip(type: "int32", input: "2147483647", output: "2147483647", payload: "ffffffff07"),
        RoundTrip(type: "int32", input: "-2147483648", output: "-2147483648", payload: "80808080f8ffffffff01"),
        RoundTrip(type: "uint32", input: "4000000000", output: "4000000000", payload: "80d0acf30e"),
        RoundTrip(type: "uint32", input: "0", output: "0", payload: "00"),
        RoundTrip(type: "int64", input: "-9000000000", output: "-9000000000", payload: "80ccbbbcdeffffffff01"),
        RoundTrip(
            type: "int64", input: "9223372036854775807", output: "9223372036854775807", payload: "ffffffffffffffff7f"),
        RoundTrip(
            type: "uint64", input: "18446744073709551615", output: "18446744073709551615",
            payload: "ffffffffffffffffff01"),
        RoundTrip(type: "float", input: "1.5", output: "1.5", payload: "0000c03f"),
        RoundTrip(type: "float", input: "-0.25", output: "-0.25", payload: "000080be"),
        RoundTrip(type: "double", input: "3.141592653589793", output: "3.141592653589793", payload: "182d4454fb210940"),
        RoundTrip(
            type: "string", input: "hello, MMKV ✓", output: "hello, MMKV ✓", payload: "0f68656c6c6f2c204d4d4b5620e29c93"
        ),
        RoundTrip(type: "string", input: "", output: "", payload: "00"),
        RoundTrip(type: "bytes", input: "00ff7f80", output: "00ff7f80", payload: "0400ff7f80"),
        RoundTrip(type: "bytes", input: "ABCDEF", output: "abcdef", payload: "03abcdef"),
        RoundTrip(type: "strings", input: "a,bc,,d", output: "a,bc,,d", payload: "080161026263000164"),
        RoundTrip(type: "payload", input: "0a0b0c", output: "0a0b0c", payload: "0a0b0c"),
    ]

    @Test("set --type T then get --type T round-trips and stores MMKV's payload", arguments: roundTrips)
    func typedRoundTrip(_ trip: RoundTrip) throws {
        try TemporaryDirectory.with { tmp in
            let store = CLI.store(tmp.path("root"), "s")
            // `--` ends the options, so values such as -42 are not taken for options.
            let set = try CLI.succeed(["set", "--create", "--type", trip.type] + store + ["--", "k", trip.input])
            #expect(set.stdout.isEmpty && set.stderr.isEmpty, "\(set)")
            #expect(try CLI.succeed(["get", "--type", trip.type] + store + ["k"]).stdout == trip.output + "\n")
            #expect(try CLI.succeed(["get", "--type", "payload"] + store + ["k"]).stdout == trip.payload + "\n")
            if trip.type == "string" {
                #expect(try CLI.succeed(["get"] + store + ["k"]).stdout == trip.output + "\n", "get defaults to string")
            }
            #expect(try CLI.succeed(["dump"] + store).stdout == "k\t\(trip.payload)\n#count\t1\n")
        }
    }

    @Test(
        "a negative number is taken as the value without needing --",
        arguments: [
            ("int32", "-42"), ("int64", "-9000000000"), ("float", "-0.25"), ("double", "-1.5"),
        ])
    func negativeValueWithoutSeparator(_ type: String, _ value: String) throws {
        try TemporaryDirectory.with { tmp in
            let store = CLI.store(tmp.path("root"), "s")
            try CLI.succeed(["set", "--create", "--type", type] + store + ["k", value])
            #expect(try CLI.run(["get", "--type", type] + store + ["k"]).stdout == value + "\n")
        }
    }

    @Test("set without --type stores a string")
    func setDefaultsToString() throws {
        try TemporaryDirectory.with { tmp in
            let store = CLI.store(tmp.path("root"), "s")
            try CLI.succeed(["set", "--create"] + store + ["k", "a b  c"])
            #expect(try CLI.succeed(["get", "--type", "string"] + store + ["k"]).stdout == "a b  c\n")
            #expect(try CLI.succeed(["get"] + store + ["k"]).stdout == "a b  c\n", "get defaults to string too")
            #expect(try CLI.succeed(["get", "--type", "payload"] + store + ["k"]).stdout == "06612062202063\n")
        }
    }

    @Test(
        "set overwrites; get reads the golden store's values",
        arguments: [
            ("i32", "int32", "-42"), ("u32", "uint32", "4000000000"), ("i64", "int64", "-9000000000"),
            ("u64", "uint64", "18446744073709551615"), ("b", "bool", "true"), ("d", "double", "3.141592653589793"),
            ("f", "float", "1.5"), ("s", "string", "hello, MMKV ✓"), ("by", "bytes", "00ff7f80"),
        ])
    func getGoldenValues(_ key: String, _ type: String, _ value: String) throws {
        let golden = GoldenCase.plain[0]
        let result = try CLI.succeed(["get", "--type", type] + CLI.store(golden.root, golden.id) + [key])
        #expect(result.stdout == value + "\n")
    }

    @Test("set replaces the previous value of a key")
    func setOverwrites() throws {
        try TemporaryDirectory.with { tmp in
            let store = CLI.store(tmp.path("root"), "s")
            try CLI.succeed(["set", "--create", "--type", "int32"] + store + ["k", "1"])
            try CLI.succeed(["set", "--create", "--type", "int32"] + store + ["k", "2"])
            try CLI.succeed(["set", "--create", "--type", "string"] + store + ["other", "x"])
            #expect(try CLI.succeed(["get", "--type", "int32"] + store + ["k"]).stdout == "2\n")
            #expect(try CLI.succeed(["dump"] + store).stdout == "k\t02\nother\t0178\n#count\t2\n")
        }
    }

    @Test(
        "set of a value that does not parse as --type fails with a message",
        arguments: [
            ("int32", "abc"), ("int32", "2147483648"), ("uint32", "-1"), ("int64", "1.5"), ("uint64", "-1"),
            ("bool", "maybe"), ("float", "one"), ("double", ""), ("bytes", "xyz"), ("bytes", "abc"),
            ("payload", "zz"), ("payload", ""),
        ])
    func setInvalidValue(_ type: String, _ value: String) throws {
        try TemporaryDirectory.with { tmp in
            let store = CLI.store(tmp.path("root"), "s")
            try CLI.succeed(["set", "--create", "--type", "int32"] + store + ["k", "7"])
            let result = try CLI.fail(["set", "--create", "--type", type] + store + ["--", "k", value])
            #expect(result.status == 64, "a value that is not of its --type is a usage error")
            #expect(result.stderr.contains("not a valid \(type)"), "\(result)")
            #expect(try CLI.succeed(["get", "--type", "int32"] + store + ["k"]).stdout == "7\n", "the old value stays")
        }
    }

    @Test("an unknown --type is a usage error")
    func unknownType() throws {
        try TemporaryDirectory.with { tmp in
            let store = CLI.store(tmp.path("root"), "s")
            let result = try CLI.fail(["set", "--create", "--type", "int128"] + store + ["k", "1"])
            #expect(result.stderr.contains("int128"), "\(result)")
        }
    }

    @Test("get of an absent key exits non-zero with a message and prints nothing")
    func getAbsentKey() throws {
        try TemporaryDirectory.with { tmp in
            let store = CLI.store(tmp.path("root"), "s")
            try CLI.succeed(["set", "--create"] + store + ["present", "yes"])
            for type in ["payload", "string", "int32", "bool", "strings"] {
                let result = try CLI.fail(["get", "--type", type] + store + ["absent"])
                #expect(result.status == 1)
                #expect(result.stdout.isEmpty, "\(result)")
                #expect(result.stderr.contains("absent"), "\(result)")
            }
        }
    }

    @Test("get on a store that does not exist fails and creates nothing")
    func getMissingStore() throws {
        try TemporaryDirectory.with { tmp in
            let root = tmp.path("root")
            let result = try CLI.fail(["get"] + CLI.store(root, "s") + ["k"])
            #expect(result.stdout.isEmpty)
            #expect(!FileManager.default.fileExists(atPath: root + "/s"), "a read-only command created the store")
            let dump = try CLI.fail(["dump"] + CLI.store(root, "s"))
            #expect(dump.stdout.isEmpty)
            try CLI.fail(["keys"] + CLI.store(root, "s"))
            #expect(!FileManager.default.fileExists(atPath: root + "/s"))
            #expect(!FileManager.default.fileExists(atPath: root + "/s.crc"))
        }
    }

    @Test("remove deletes keys; absent keys are not an error")
    func remove() throws {
        try TemporaryDirectory.with { tmp in
            let store = CLI.store(tmp.path("root"), "s")
            for key in ["a", "b", "c"] { try CLI.succeed(["set", "--create"] + store + [key, key]) }
            let result = try CLI.succeed(["remove"] + store + ["a", "nope", "c"])
            #expect(result.stdout.isEmpty && result.stderr.isEmpty)
            #expect(try CLI.succeed(["keys"] + store).stdout == "b\n")
            try CLI.succeed(["remove"] + store + ["a"])
            try CLI.fail(["get"] + store + ["a"])
            #expect(try CLI.succeed(["dump"] + store).stdout == "b\t0162\n#count\t1\n")
            try CLI.succeed(["verify"] + store)
        }
    }

    @Test("keys are printed one a line, sorted by UTF-8 bytes")
    func keysSortedByBytes() throws {
        try TemporaryDirectory.with { tmp in
            let store = CLI.store(tmp.path("root"), "s")
            // "e\u{301}" (65 cc 81) and "é" (c3 a9) are distinct MMKV keys though Swift calls them equal;
            // by bytes: "B" < "Z" < "a" < "aa" < "b" < "e\u{301}" < "f" < "é" < "✓".
            let keys = ["é", "b", "f", "aa", "e\u{301}", "Z", "a", "✓", "B"]
            for (i, key) in keys.enumerated() {
                try CLI.succeed(["set", "--create", "--type", "int32"] + store + [key, "\(i)"])
            }
            let sorted = ["B", "Z", "a", "aa", "b", "e\u{301}", "f", "é", "✓"]
            let result = try CLI.succeed(["keys"] + store)
            #expect(result.stdoutData == Data(sorted.map { $0 + "\n" }.joined().utf8), "\(result)")
            #expect(try CLI.succeed(["get", "--type", "int32"] + store + ["é"]).stdout == "0\n")
            #expect(try CLI.succeed(["get", "--type", "int32"] + store + ["e\u{301}"]).stdout == "4\n")
            let dump = try CLI.succeed(["dump"] + store)
            let dumpedKeys = dump.stdoutData.split(separator: UInt8(ascii: "\n")).dropLast()
                .map { Data($0.prefix { $0 != UInt8(ascii: "\t") }) }
            #expect(dumpedKeys == sorted.map { Data($0.utf8) })
        }
    }

    @Test("keys of the golden stores")
    func keysOfGoldenStores() throws {
        let a = GoldenCase.plain[0]
        let c = GoldenCase.plain[1]
        #expect(try CLI.succeed(["keys"] + CLI.store(a.root, a.id)).stdout == "b\nby\nd\nf\ni32\ni64\ns\nu32\nu64\n")
        #expect(try CLI.succeed(["keys"] + CLI.store(c.root, c.id)).stdout == "counter\nkeep\nname\n")
    }

    @Test("keys of an empty store prints nothing")
    func keysOfEmptyStore() throws {
        try TemporaryDirectory.with { tmp in
            let store = CLI.store(tmp.path("root"), "s")
            try CLI.succeed(["apply", "--create"] + store, stdin: "")
            let result = try CLI.succeed(["keys"] + store)
            #expect(result.stdout.isEmpty)
        }
    }
}
