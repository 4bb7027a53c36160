import Foundation
import MappedKVProcessTestSupport
import Testing

/// Bad keys, store IDs and command lines, and IDs that MMKV hashes into a file name.
@Suite("Bad arguments and special IDs")
struct BadArgumentTests {
    @Test("an empty key fails cleanly with a message")
    func emptyKey() throws {
        try TemporaryDirectory.with { tmp in
            let store = CLI.store(tmp.path("root"), "s")
            let set = try CLI.fail(["set", "--create"] + store + ["", "v"])
            #expect(set.status == 2)
            #expect(set.stderr.contains("key"), "\(set)")
            for type in ["int32", "bytes", "payload"] {
                let typed = try CLI.fail(["set", "--create", "--type", type] + store + ["", "01"])
                #expect(typed.stderr.contains("key"), "\(typed)")
            }
            let remove = try CLI.fail(["remove"] + store + [""])
            #expect(remove.stderr.contains("key"), "\(remove)")
            try CLI.fail(["get"] + store + [""])
            #expect(try CLI.succeed(["dump"] + store).stdout == "#count\t0\n")
        }
    }

    @Test("an empty key in a script fails with its line number")
    func emptyKeyInScript() throws {
        try TemporaryDirectory.with { tmp in
            let store = CLI.store(tmp.path("root"), "s")
            let result = try CLI.fail(
                ["apply", "--create"] + store, stdin: "set-int32 a 1\nset-int32 b 2\nset-int32  3\n")
            #expect(result.stderr.contains("line 3"), "\(result)")
            #expect(try CLI.succeed(["dump"] + store).stdout == "a\t01\nb\t02\n#count\t2\n")
        }
    }

    @Test("a key over 16 KiB is refused with a message")
    func keyTooLong() throws {
        try TemporaryDirectory.with { tmp in
            let store = CLI.store(tmp.path("root"), "s")
            let longest = String(repeating: "k", count: 16_384)
            try CLI.succeed(["set", "--create"] + store + [longest, "v"])
            #expect(try CLI.succeed(["get", "--type", "string"] + store + [longest]).stdout == "v\n")
            let result = try CLI.fail(["set", "--create"] + store + [longest + "k", "v"])
            #expect(result.stderr.contains("key"), "\(result)")
            #expect(try CLI.succeed(["keys"] + store).stdout == longest + "\n")
        }
    }

    @Test("an empty or unusable store ID fails cleanly and creates nothing", arguments: ["", ".", ".."])
    func badStoreID(_ id: String) throws {
        try TemporaryDirectory.with { tmp in
            let root = tmp.path("root")
            try CLI.fail(["set", "--create"] + CLI.store(root, id) + ["k", "v"])
            try CLI.fail(["apply", "--create"] + CLI.store(root, id), stdin: "set-int32 k 1\n")
            try CLI.fail(["dump"] + CLI.store(root, id))
            try CLI.fail(["info"] + CLI.store(root, id))
            let created = (try? FileManager.default.contentsOfDirectory(atPath: root)) ?? []
            #expect(created.isEmpty, "files created for ID '\(id)': \(created)")
        }
    }

    @Test(
        "missing options and unknown subcommands are usage errors",
        arguments: [
            ["dump"], ["dump", "--root", "/nonexistent"], ["dump", "--id", "s"],
            ["set", "--create", "--root", "/nonexistent", "--id", "s", "k"],
            ["frobnicate"], ["dump", "--root", "/nonexistent", "--id", "s", "--bogus"],
        ])
    func usageErrors(_ arguments: [String]) throws {
        let result = try CLI.fail(arguments)
        #expect(result.stdout.isEmpty, "\(result)")
        #expect(!FileManager.default.fileExists(atPath: "/nonexistent"))
    }

    @Test("an ID with special characters is stored as specialCharacter/<md5 of the ID>")
    func specialCharacterID() throws {
        try TemporaryDirectory.with { tmp in
            let root = tmp.path("root")
            let id = "a/b:c"
            let store = CLI.store(root, id)
            try CLI.succeed(["set", "--create", "--type", "int32"] + store + ["k", "42"])
            try CLI.succeed(["apply", "--create"] + store, stdin: "set-string name special id\n")

            #expect(try FileManager.default.contentsOfDirectory(atPath: root) == ["specialCharacter"])
            // The data file, the meta file and the index file (docs/FORMAT.md 12), all named by the hash.
            let files = try FileManager.default.contentsOfDirectory(atPath: root + "/specialCharacter").sorted()
            #expect(files.count == 3, "\(files)")
            let name = try #require(files.first)
            #expect(name.count == 32 && name.allSatisfy { "0123456789abcdef".contains($0) }, "\(files)")
            #expect(files == [name, name + ".crc", name + ".index"])
            // MMKV names the files by the MD5 of the ID's UTF-8 bytes: md5("a/b:c").
            #expect(name == "42d7d68ba871aeb78a438f04d0f1f19c")

            #expect(try CLI.succeed(["get", "--type", "int32"] + store + ["k"]).stdout == "42\n")
            #expect(try CLI.succeed(["dump"] + store).stdout == "k\t2a\nname\t0a7370656369616c206964\n#count\t2\n")
            try CLI.succeed(["verify"] + store)
            let info = TabSeparated.parse(try CLI.succeed(["info"] + store).stdout)
            #expect(info["dataPath"]?.hasSuffix("/specialCharacter/" + name) == true, "\(info)")
            #expect(info["id"] == id)
        }
    }

    @Test(
        "IDs with each special character are hashed; a plain ID is not",
        arguments: [
            "back\\slash", "sl/ash", "co:lon", "st*ar", "que?ry", "quo\"te", "le<ss", "gre>ater", "pi|pe",
        ])
    func everySpecialCharacter(_ id: String) throws {
        try TemporaryDirectory.with { tmp in
            let root = tmp.path("root")
            try CLI.succeed(["set", "--create"] + CLI.store(root, id) + ["k", "v"])
            #expect(try FileManager.default.contentsOfDirectory(atPath: root) == ["specialCharacter"])
            let files = try FileManager.default.contentsOfDirectory(atPath: root + "/specialCharacter")
            #expect(files.count == 3 && files.allSatisfy { $0.hasPrefix(files.min()!) }, "\(files)")
            #expect(try CLI.succeed(["get", "--type", "string"] + CLI.store(root, id) + ["k"]).stdout == "v\n")

            try CLI.succeed(["set", "--create"] + CLI.store(root, "plain-id.1") + ["k", "v"])
            #expect(FileManager.default.fileExists(atPath: root + "/plain-id.1"))
            #expect(FileManager.default.fileExists(atPath: root + "/plain-id.1.crc"))
        }
    }
}
