import Foundation
import MappedKVFormat
import MappedKVProcessTestSupport
import Testing

/// Larger stores, mismatched types and odd environments: the CLI keeps working or fails cleanly.
@Suite("Robustness")
struct RobustnessTests {
    @Test("a long script with many overwrites, removals and file growth matches a model")
    func longScriptMatchesModel() throws {
        try TemporaryDirectory.with { tmp in
            let store = CLI.store(tmp.path("root"), "s")
            var model: [String: [UInt8]] = [:]
            var script = ""
            for round in 0..<6 {
                for i in 0..<400 {
                    let key = "key-\(i)"
                    if (i + round) % 7 == 0 {
                        script += "remove \(key)\n"
                        model[key] = nil
                    } else {
                        let value = "value \(round) of \(i)" + String(repeating: "*", count: i % 50)
                        script += "set-string \(key) \(value)\n"
                        var payload: [UInt8] = []
                        Varint.append(UInt64(value.utf8.count), to: &payload)
                        payload += Array(value.utf8)
                        model[key] = payload
                    }
                }
            }
            try CLI.succeed(["apply", "--create"] + store, stdin: script)

            var expected = ""
            for key in model.keys.sorted(by: { $0.utf8.lexicographicallyPrecedes($1.utf8) }) {
                expected += key + "\t" + model[key]!.map { String(format: "%02x", $0) }.joined() + "\n"
            }
            expected += "#count\t\(model.count)\n"
            #expect(try CLI.succeed(["dump"] + store).stdout == expected)
            let verify = try CLI.succeed(["verify"] + store)
            #expect(verify.stdout.contains("\(model.count) keys"), "\(verify)")
        }
    }

    @Test("a 300 KB string value set through apply reads back whole")
    func largeValue() throws {
        try TemporaryDirectory.with { tmp in
            let store = CLI.store(tmp.path("root"), "s")
            let value = String(repeating: "0123456789", count: 30_000)
            try CLI.succeed(
                ["apply", "--create"] + store, stdin: "set-int32 small 1\nset-string big \(value)\nset-int32 after 2\n")
            #expect(try CLI.succeed(["get", "--type", "string"] + store + ["big"]).stdout == value + "\n")
            let info = TabSeparated.parse(try CLI.succeed(["info"] + store).stdout)
            #expect((Int(info["fileSize"] ?? "") ?? 0) > 300_000, "\(info)")
            #expect(info["keys"] == "3")
            try CLI.succeed(["verify"] + store)
        }
    }

    @Test("reading a value as any other type exits normally: a value or a clean error, never a crash")
    func typeMismatchNeverCrashes() throws {
        try TemporaryDirectory.with { tmp in
            let store = CLI.store(tmp.path("root"), "s")
            try CLI.succeed(
                ["apply", "--create"] + store,
                stdin: """
                    set-bool bool true
                    set-int32 int32 -42
                    set-uint32 uint32 4000000000
                    set-int64 int64 -9000000000
                    set-uint64 uint64 18446744073709551615
                    set-float float 1.5
                    set-double double 3.141592653589793
                    set-string string hello, MMKV ✓
                    set-bytes bytes 00ff7f80

                    """)
            try CLI.succeed(["set", "--create", "--type", "strings"] + store + ["strings", "a,bc,,d"])
            try CLI.succeed(["set", "--create", "--type", "payload"] + store + ["payload", "ff"])
            let types = [
                "bool", "int32", "uint32", "int64", "uint64", "float", "double", "string", "bytes", "strings",
                "payload",
            ]
            for key in types {
                for type in types {
                    let result = try CLI.run(["get", "--type", type] + store + [key])
                    #expect(result.exitedNormally, "crashed: \(result)")
                    #expect(result.status == 0 || (result.status == 2 && !result.stderr.isEmpty), "\(result)")
                }
            }
        }
    }

    @Test("the last script line needs no newline")
    func lastLineWithoutNewline() throws {
        try TemporaryDirectory.with { tmp in
            let store = CLI.store(tmp.path("root"), "s")
            try CLI.succeed(["apply", "--create"] + store, stdin: "set-int32 a 1\nset-string b last line")
            #expect(try CLI.succeed(["dump"] + store).stdout == "a\t01\nb\t096c617374206c696e65\n#count\t2\n")
        }
    }

    @Test("an empty store, as apply leaves it, verifies and dumps")
    func emptyStore() throws {
        try TemporaryDirectory.with { tmp in
            let store = CLI.store(tmp.path("root"), "s")
            try CLI.succeed(["apply", "--create"] + store, stdin: "")
            try CLI.succeed(["verify"] + store)
            #expect(try CLI.succeed(["dump"] + store).stdout == "#count\t0\n")
            let info = TabSeparated.parse(try CLI.succeed(["info"] + store).stdout)
            #expect(info["keys"] == "0")
            #expect(info["status"] == "ok")
        }
    }

    @Test("--verbose logs to stderr only; stdout is unchanged", arguments: GoldenCase.plain)
    func verbose(_ golden: GoldenCase) throws {
        let quiet = try CLI.succeed(["dump"] + CLI.store(golden.root, golden.id))
        let loud = try CLI.succeed(["dump", "--verbose"] + CLI.store(golden.root, golden.id))
        #expect(loud.stdoutData == quiet.stdoutData)
        #expect(loud.stdoutData == (try golden.expected()))
        #expect(!loud.stderr.isEmpty, "--verbose logged nothing")
    }

    @Test("stores with different IDs in one root are independent")
    func independentIDs() throws {
        try TemporaryDirectory.with { tmp in
            let root = tmp.path("root")
            try CLI.succeed(["set", "--create"] + CLI.store(root, "one") + ["k", "1"])
            try CLI.succeed(["set", "--create"] + CLI.store(root, "two") + ["k", "2"])
            try CLI.succeed(["remove"] + CLI.store(root, "one") + ["k"])
            #expect(try CLI.succeed(["dump"] + CLI.store(root, "one")).stdout == "#count\t0\n")
            #expect(try CLI.succeed(["dump"] + CLI.store(root, "two")).stdout == "k\t0132\n#count\t1\n")
        }
    }

    @Test("a root that is a regular file fails cleanly")
    func rootIsAFile() throws {
        try TemporaryDirectory.with { tmp in
            let file = try tmp.write("not a directory\n", to: "file")
            try CLI.fail(["set", "--create"] + CLI.store(file, "s") + ["k", "v"])
            try CLI.fail(["apply", "--create"] + CLI.store(file, "s"), stdin: "set-int32 k 1\n")
            try CLI.fail(["dump"] + CLI.store(file, "s"))
            try CLI.fail(["verify"] + CLI.store(file, "s"))
            #expect(try String(contentsOfFile: file, encoding: .utf8) == "not a directory\n")
        }
    }

    @Test("clear increments the meta sequence")
    func clearIncrementsSequence() throws {
        try TemporaryDirectory.with { tmp in
            let store = CLI.store(tmp.path("root"), "s")
            try CLI.succeed(["apply", "--create"] + store, stdin: "set-int32 a 1\nset-int32 b 2\n")
            let before = TabSeparated.parse(try CLI.succeed(["info"] + store).stdout)
            try CLI.succeed(["apply", "--create"] + store, stdin: "clear\n")
            let after = TabSeparated.parse(try CLI.succeed(["info"] + store).stdout)
            let sequenceBefore = try #require(before["sequence"].flatMap { Int($0) })
            let sequenceAfter = try #require(after["sequence"].flatMap { Int($0) })
            #expect(sequenceAfter > sequenceBefore)
            #expect(after["actualSize"] == "0")
            #expect(after["keys"] == "0")
        }
    }
}
