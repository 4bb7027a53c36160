import Foundation
import MappedKVProcessTestSupport
import Testing

/// The CLI as scripts use it: one exit status per kind of failure, the same for every command;
/// the `--json` shapes, parsed back; `export` and `import` round-tripping every type and expiry;
/// no store created without `--create`; `info` and `verify` agreeing; exact repair reports.
@Suite("Scripting with the CLI")
struct ScriptingTests {
    /// A JSON document printed by a command: exactly one line, parsed.
    static func json(_ result: CLIResult) throws -> Any {
        #expect(result.stdout.hasSuffix("\n") && result.stdout.dropLast().allSatisfy { $0 != "\n" }, "\(result)")
        return try JSONSerialization.jsonObject(with: Data(result.stdout.utf8), options: [.fragmentsAllowed])
    }

    /// A store holding one value of every CLI type.
    static func typedStore(_ root: String) throws -> [String] {
        let store = CLI.store(root, "s")
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
        try CLI.succeed(["set", "--type", "strings"] + store + ["strings", "a,bc,,d"])
        try CLI.succeed(["set", "--type", "payload"] + store + ["payload", "0a0b0c"])
        return store
    }

    @Test(
        "every exit status: 0 ok, 1 key not found, 2 wrong type, 3 no store, 4 damaged, 5 wrong key, 6 held, 7 no key, 64 usage"
    )
    func exitStatuses() throws {
        try TemporaryDirectory.with { tmp in
            let root = tmp.path("root")
            let store = CLI.store(root, "s")
            // 3: nothing creates a store without --create; read-only commands never do.
            for command in [["get", "k"], ["keys"], ["dump"], ["export"], ["info"], ["verify"], ["remove", "k"]] {
                let result = try CLI.run([command[0]] + store + command.dropFirst())
                #expect(result.status == 3, "\(result)")
                #expect(result.stderr.contains("no store at"), "\(result)")
            }
            let set = try CLI.run(["set"] + store + ["k", "v"])
            #expect(set.status == 3 && set.stderr.contains("--create"), "\(set)")
            let apply = try CLI.run(["apply"] + store, stdin: "set-int32 k 1\n")
            #expect(apply.status == 3 && apply.stderr.contains("--create"), "\(apply)")
            let importing = try CLI.run(["import"] + store, stdin: "{\"key\": \"k\", \"payload\": \"2a\"}\n")
            #expect(importing.status == 3, "\(importing)")
            #expect(!FileManager.default.fileExists(atPath: root + "/s"), "a command without --create made the store")

            try CLI.succeed(["set", "--create"] + store + ["k", "v"])
            #expect(try CLI.run(["get"] + store + ["k"]).status == 0)
            let missing = try CLI.run(["get"] + store + ["absent"])
            #expect(missing.status == 1 && missing.stderr.contains("absent"), "\(missing)")
            let wrongType = try CLI.run(["get", "--type", "double"] + store + ["k"])
            #expect(wrongType.status == 2 && wrongType.stderr.contains("not a valid double"), "\(wrongType)")
            #expect(wrongType.stdout.isEmpty, "\(wrongType)")
            let usage = try CLI.run(["get"] + store)
            #expect(usage.status == 64, "\(usage)")

            // 5: a wrong key, for reads and for verify and info.
            let secret = CLI.store(root, "secret") + ["--crypt-key", "right"]
            try CLI.succeed(["set", "--create"] + secret + ["k", "v"])
            let wrong = CLI.store(root, "secret") + ["--crypt-key", "wrong"]
            for command in [["get", "k"], ["dump"], ["verify"], ["info"]] {
                let result = try CLI.run([command[0]] + wrong + command.dropFirst())
                #expect(result.status == 5, "\(result)")
            }
            // 7: no key for a store whose meta file holds an IV.
            for command in [["get", "k"], ["dump"], ["verify"], ["info"]] {
                let result = try CLI.run([command[0]] + CLI.store(root, "secret") + command.dropFirst())
                #expect(result.status == 7, "\(result)")
            }

            // 6: held in single-process mode by another process.
            let holder = try HeldStore(CLI.store(root, "held"))
            defer { holder.release() }
            let held = try CLI.run(["get"] + CLI.store(root, "held") + ["--multi-process", "k"])
            #expect(held.status == 6, "\(held)")
            #expect(held.stderr.contains("pid \(holder.process.processIdentifier)"), "\(held)")

            // 4: damaged.
            var data = try Data(contentsOf: URL(fileURLWithPath: root + "/s"))
            data[6] ^= 0x40
            try data.write(to: URL(fileURLWithPath: root + "/s"))
            for command in [["get", "k"], ["verify"], ["info"]] {
                let result = try CLI.run([command[0]] + store + command.dropFirst())
                #expect(result.status == 4, "\(result)")
            }
        }
    }

    @Test("get --json gives each type's value as the matching JSON type")
    func getJSON() throws {
        try TemporaryDirectory.with { tmp in
            let store = try Self.typedStore(tmp.path("root"))
            func value(_ key: String, _ type: String) throws -> Any? {
                let object = try #require(
                    try Self.json(try CLI.succeed(["get", "--json", "--type", type] + store + [key])) as? [String: Any])
                #expect(object["key"] as? String == key && object["type"] as? String == type)
                return object["value"]
            }
            #expect(try value("bool", "bool") as? Bool == true)
            #expect((try value("int32", "int32") as? NSNumber)?.int64Value == -42)
            #expect((try value("uint32", "uint32") as? NSNumber)?.int64Value == 4_000_000_000)
            #expect((try value("int64", "int64") as? NSNumber)?.int64Value == -9_000_000_000)
            #expect((try value("uint64", "uint64") as? NSNumber)?.uint64Value == UInt64.max)
            #expect((try value("float", "float") as? NSNumber)?.doubleValue == 1.5)
            #expect((try value("double", "double") as? NSNumber)?.doubleValue == 3.141592653589793)
            #expect(try value("string", "string") as? String == "hello, MMKV ✓")
            #expect(try value("bytes", "bytes") as? String == "00ff7f80")
            #expect(try value("strings", "strings") as? [String] == ["a", "bc", "", "d"])
            #expect(try value("payload", "payload") as? String == "0a0b0c")
            // A value that is not of the type is refused, not printed.
            let refused = try CLI.run(["get", "--json", "--type", "int32"] + store + ["string"])
            #expect(refused.status == 2 && refused.stdout.isEmpty, "\(refused)")
        }
    }

    @Test("keys, dump, info and verify --json print one document of the documented shape")
    func listingJSON() throws {
        try TemporaryDirectory.with { tmp in
            let store = try Self.typedStore(tmp.path("root"))
            let keys = try #require(try Self.json(try CLI.succeed(["keys", "--json"] + store)) as? [String])
            let keyLines = try CLI.succeed(["keys"] + store).stdout.split(separator: "\n").map(String.init)
            #expect(keys == keyLines)
            #expect(keys.count == 11)

            let dump = try #require(try Self.json(try CLI.succeed(["dump", "--json"] + store)) as? [String: Any])
            let entries = try #require(dump["entries"] as? [[String: String]])
            #expect(dump["count"] as? Int == 11 && entries.count == 11)
            let text = entries.map { "\($0["key"] ?? "")\t\($0["payload"] ?? "")\n" }.joined() + "#count\t11\n"
            let dumped = try CLI.succeed(["dump"] + store).stdout
            #expect(text == dumped)

            let info = try #require(try Self.json(try CLI.succeed(["info", "--json"] + store)) as? [String: Any])
            #expect(info["keys"] as? Int == 11 && info["status"] as? String == "sound" && info["problem"] is NSNull)
            #expect(info["crcOK"] as? Bool == true && info["lengthOK"] as? Bool == true)
            let meta = try #require(info["meta"] as? [String: Any])
            #expect(meta["crc"] as? String == info["computedCRC"] as? String)
            #expect((meta["sequence"] as? Int).map { $0 >= 1 } == true)

            let verify = try #require(try Self.json(try CLI.succeed(["verify", "--json"] + store)) as? [String: Any])
            #expect(verify["status"] as? String == "sound" && verify["recovery"] is NSNull)
            let records = try #require(verify["records"] as? [String: Any])
            #expect(records["decodable"] as? Int == 11 && records["error"] is NSNull)
            let live = try #require(verify["live"] as? [String: Any])
            #expect(live["keys"] as? Int == 11)
            // A one-page store has no meaningful space ratio.
            #expect(live["spaceAmplification"] is NSNull, "\(live)")
            let lines = try CLI.succeed(["verify"] + store).stdout
            #expect(lines.contains("space amplification - (the file is at its one-page minimum size)"), "\(lines)")
        }
    }

    @Test("export then import into a fresh store gives an identical dump, every type and expiry time included")
    func exportImportRoundTrip() throws {
        try TemporaryDirectory.with { tmp in
            let root = tmp.path("root")
            let store = try Self.typedStore(root)
            try CLI.succeed(["expire", "--enable"] + store)
            try CLI.succeed(["set", "--expire-after", "3600"] + store + ["session", "token"])
            let exported = try CLI.succeed(["export"] + store).stdout
            let lines = exported.split(separator: "\n")
            #expect(lines.count == 12)
            let session = try #require(
                lines.compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
                    .first { $0["key"] as? String == "session" })
            let expiresAt = try #require(session["expiresAt"] as? Int)
            let now = Int(Date().timeIntervalSince1970)
            #expect(expiresAt > now + 3000 && expiresAt <= now + 3601, "\(session)")
            #expect(session["type"] as? String == "string" && session["value"] as? String == "token")

            let copy = CLI.store(root, "copy")
            let imported = try CLI.succeed(["import", "--create"] + copy, stdin: exported)
            #expect(imported.stdout == "imported 12 entries\n", "\(imported)")
            #expect(try CLI.succeed(["dump"] + copy).stdout == (try CLI.succeed(["dump"] + store).stdout))
            #expect(try CLI.succeed(["export"] + copy).stdout == exported, "expiry times survive the round trip")
            #expect(try CLI.succeed(["expire"] + copy).stdout == "on\n")
        }
    }

    @Test("import takes typed lines, checks every line first, and writes nothing when one is bad")
    func importChecksFirst() throws {
        try TemporaryDirectory.with { tmp in
            let store = CLI.store(tmp.path("root"), "s")
            try CLI.succeed(["set", "--create"] + store + ["old", "kept"])
            let typed = """
                {"key": "n", "type": "int32", "value": -5}
                {"key": "flag", "type": "bool", "value": true}
                {"key": "list", "type": "strings", "value": ["x", "y"]}

                {"key": "name", "type": "string", "value": "Ada"}
                """
            try CLI.succeed(["import"] + store, stdin: typed)
            #expect(try CLI.succeed(["get", "--type", "int32"] + store + ["n"]).stdout == "-5\n")
            #expect(try CLI.succeed(["get", "--type", "bool"] + store + ["flag"]).stdout == "true\n")
            #expect(try CLI.succeed(["get", "--type", "strings"] + store + ["list"]).stdout == "x,y\n")
            #expect(try CLI.succeed(["get"] + store + ["name"]).stdout == "Ada\n")

            let before = try CLI.succeed(["dump"] + store).stdout
            for bad in [
                "not json", "[1]", "{\"payload\": \"2a\"}", "{\"key\": \"k\"}", "{\"key\": \"k\", \"payload\": \"zz\"}",
                "{\"key\": \"k\", \"type\": \"int32\", \"value\": \"x\"}",
                "{\"key\": \"k\", \"payload\": \"2a\", \"expiresAt\": -1}",
            ] {
                let result = try CLI.run(["import"] + store, stdin: "{\"key\": \"a\", \"payload\": \"2a\"}\n\(bad)\n")
                #expect(result.status == 2 && result.stderr.contains("line 2"), "\(bad): \(result)")
            }
            #expect(try CLI.succeed(["dump"] + store).stdout == before, "a bad line must stop the whole import")
        }
    }

    /// A store of keys `first` and `second` whose meta holds the size after `second` and the CRC
    /// before it: a meta write torn after the size and before the CRC. Returns the old and torn
    /// metas; `withoutCheckpoints` clears MappedKV's checkpoints (as MMKV writes a store), which
    /// could vouch for the new size.
    func storeWithTornMeta(_ root: String, withoutCheckpoints: Bool) throws -> (old: Data, torn: Data) {
        let store = CLI.store(root, "s")
        try CLI.succeed(["set", "--create"] + store + ["first", "value"])
        let metaURL = URL(fileURLWithPath: root + "/s.crc")
        let oldMeta = try Data(contentsOf: metaURL)
        try CLI.succeed(["set"] + store + ["second", "another value"])
        var torn = try Data(contentsOf: metaURL)
        torn.replaceSubrange(0..<4, with: oldMeta[0..<4])
        if withoutCheckpoints { torn.replaceSubrange(112..<504, with: Data(count: 392)) }
        try torn.write(to: metaURL)
        return (oldMeta, torn)
    }

    @Test("info and verify agree on a store an interrupted append left repairable, and repair reports the exact bytes")
    func tornMetaReport() throws {
        try TemporaryDirectory.with { tmp in
            let root = tmp.path("root")
            let store = CLI.store(root, "s")
            let (oldMeta, torn) = try storeWithTornMeta(root, withoutCheckpoints: true)
            func size(_ meta: Data) -> Int { Int(meta[28]) | Int(meta[29]) << 8 | Int(meta[30]) << 16 }
            let appended = size(torn) - size(oldMeta)
            #expect(appended == 1 + 6 + 1 + 14, "the record of 'second' is 22 bytes")

            let verify = try CLI.run(["verify", "--json"] + store)
            let info = try CLI.run(["info", "--json"] + store)
            #expect(verify.status == 4 && info.status == 4, "\(verify)\n\(info)")
            let verifyObject = try #require(try Self.json(verify) as? [String: Any])
            let infoObject = try #require(try Self.json(info) as? [String: Any])
            #expect(verifyObject["status"] as? String == infoObject["status"] as? String)
            #expect(verifyObject["problem"] as? String == infoObject["problem"] as? String)
            let recovery = try #require(verifyObject["recovery"] as? [String: Any], "\(verify)")
            let dropped = try #require(recovery["dropped"] as? [String: Any])
            #expect(dropped["bytes"] as? Int == appended && dropped["records"] as? Int == 1, "\(recovery)")
            #expect(dropped["keys"] as? [String] == ["second"])

            let repair = try CLI.succeed(["repair"] + store)
            #expect(
                repair.stdout.contains("dropped: \(appended) bytes holding 1 records never committed"), "\(repair)")
            #expect(try CLI.succeed(["keys"] + store).stdout == "first\n")
        }
    }

    @Test("the same torn meta with MappedKV's checkpoints is repaired without loss: a checkpoint vouches for the size")
    func tornMetaWithCheckpoints() throws {
        try TemporaryDirectory.with { tmp in
            let root = tmp.path("root")
            let store = CLI.store(root, "s")
            _ = try storeWithTornMeta(root, withoutCheckpoints: false)

            let verify = try CLI.run(["verify"] + store)
            #expect(verify.stdout.contains("repairable without loss"), "\(verify)")
            let repair = try CLI.succeed(["repair"] + store)
            #expect(repair.stdout.contains("repaired without loss"), "\(repair)")
            #expect(try CLI.succeed(["keys"] + store).stdout == "first\nsecond\n")
        }
    }
}
