import Foundation
import MappedKVProcessTestSupport
import Testing

/// `--crypt-key`, `--crypt-key-file`, `--crypt-key-env` and `--aes256` on the encrypted golden stores,
/// and wrong keys that fail without touching anything.
@Suite("Encryption options")
struct EncryptionOptionTests {
    static let encrypted: [(name: String, id: String, key: String)] = [
        ("b_crypt", "case_b", "MMKVKey0123456"), ("b16_crypt16", "case_b16", "MMKVKey012345678"),
    ]

    @Test("dump of an encrypted golden store with its key equals its .expect", arguments: encrypted)
    func dumpWithKey(_ name: String, _ id: String, _ key: String) throws {
        let golden = GoldenCase(name: name, id: id)
        let result = try CLI.succeed(["dump"] + CLI.store(golden.root, golden.id) + ["--crypt-key", key])
        #expect(result.stdoutData == (try golden.expected()))
        try CLI.succeed(["verify"] + CLI.store(golden.root, golden.id) + ["--crypt-key", key])
    }

    @Test("the key can come from a file or an environment variable", arguments: encrypted)
    func keyFromFileOrEnvironment(_ name: String, _ id: String, _ key: String) throws {
        try TemporaryDirectory.with { tmp in
            let golden = GoldenCase(name: name, id: id)
            let keyFile = try tmp.write(key + "\n", to: "key")
            let fromFile = try CLI.succeed(
                ["dump"] + CLI.store(golden.root, golden.id) + ["--crypt-key-file", keyFile])
            #expect(fromFile.stdoutData == (try golden.expected()))
            let fromEnv = try CLI.run(
                ["dump"] + CLI.store(golden.root, golden.id) + ["--crypt-key-env", "MAPPEDKV_TEST_KEY"],
                environment: ["MAPPEDKV_TEST_KEY": key])
            let expected = try golden.expected()
            #expect(fromEnv.status == 0 && fromEnv.stdoutData == expected, "\(fromEnv)")
        }
    }

    @Test("apply of the script with the key, then dump, equals the .expect", arguments: encrypted)
    func applyEncryptedScript(_ name: String, _ id: String, _ key: String) throws {
        try TemporaryDirectory.with { tmp in
            let golden = GoldenCase(name: name, id: id)
            let root = tmp.path("root")
            try CLI.succeed(
                ["apply", "--create"] + CLI.store(root, id) + ["--crypt-key", key], stdin: try golden.script())
            let dump = try CLI.succeed(["dump"] + CLI.store(root, id) + ["--crypt-key", key])
            #expect(dump.stdoutData == (try golden.expected()))
            let data = try Data(contentsOf: URL(fileURLWithPath: root + "/" + id))
            #expect(data.range(of: Data("hello, MMKV".utf8)) == nil, "the string must not appear in plain text")
        }
    }

    @Test("a wrong key, a key on a plain store and no key on an encrypted store fail without changing the files")
    func wrongKeysFailCleanly() throws {
        try TemporaryDirectory.with { tmp in
            let encrypted = try tmp.copyStore(from: GoldenCase(name: "b_crypt", id: "case_b").root, as: "enc")
            let plain = try tmp.copyStore(from: GoldenCase.plain[0].root, as: "plain")
            let cases: [(root: String, id: String, key: [String])] = [
                (encrypted, "case_b", ["--crypt-key", "WrongKey"]),
                (encrypted, "case_b", ["--crypt-key", "MMKVKey0123456", "--aes256"]),
                (encrypted, "case_b", []),
                (plain, GoldenCase.plain[0].id, ["--crypt-key", "SomeKey"]),
            ]
            for item in cases {
                let dataPath = item.root + "/" + item.id
                let data = try Data(contentsOf: URL(fileURLWithPath: dataPath))
                let meta = try Data(contentsOf: URL(fileURLWithPath: dataPath + ".crc"))
                // No key for a store whose meta holds an IV: a missing key (status 7), not a wrong one.
                let message = item.key.isEmpty ? "no key was given: pass its key" : "wrong encryption key"
                let status: Int32 = item.key.isEmpty ? 7 : 5
                for command in [["dump"], ["get", "s"], ["set", "--create", "k", "v"], ["remove", "s"]] {
                    let result = try CLI.fail(
                        [command[0]] + CLI.store(item.root, item.id) + item.key + command.dropFirst())
                    #expect(result.stderr.contains(message) && result.status == status, "\(result)")
                }
                let verify = try CLI.run(["verify"] + CLI.store(item.root, item.id) + item.key)
                let verdict = item.key.isEmpty ? "status: encrypted, no key given" : "wrong encryption key"
                #expect(verify.status == status && verify.stdout.contains(verdict), "\(verify)")
                let apply = try CLI.fail(
                    ["apply", "--create"] + CLI.store(item.root, item.id) + item.key, stdin: "set-int32 k 1\n")
                #expect(apply.stderr.contains(message) && apply.status == status, "\(apply)")
                #expect(try Data(contentsOf: URL(fileURLWithPath: dataPath)) == data, "data file changed: \(item)")
                #expect(
                    try Data(contentsOf: URL(fileURLWithPath: dataPath + ".crc")) == meta, "meta file changed: \(item)")
            }
        }
    }

    @Test("key options are checked: one source at most, --aes256 needs a key, the key file must exist")
    func keyOptionUsageErrors() throws {
        try TemporaryDirectory.with { tmp in
            let store = CLI.store(tmp.path("root"), "s")
            for extra in [
                ["--crypt-key", "a", "--crypt-key-env", "HOME"], ["--aes256"],
                ["--crypt-key-file", tmp.path("missing")],
                ["--crypt-key-env", "MAPPEDKV_SURELY_UNSET_VARIABLE"],
            ] {
                let result = try CLI.fail(["dump"] + store + extra)
                #expect(!result.stderr.isEmpty, "\(result)")
            }
        }
    }
}

@Suite("Rekey")
struct RekeyCommandTests {
    @Test("apply scripts can rekey mid-way, and mappedkv rekey changes or removes the key")
    func rekeyFromScriptAndCommand() throws {
        try TemporaryDirectory.with { tmp in
            let root = tmp.path("root")
            let store = CLI.store(root, "s")
            let script = "set-string a hello\nrekey K1\nset-int32 b 5\nrekey K2\nset-string c x y\n"
            try CLI.succeed(["apply", "--create"] + store, stdin: script)
            let dumpK2 = try CLI.succeed(["dump"] + store + ["--crypt-key", "K2"])
            #expect(dumpK2.stdout == "a\t0568656c6c6f\nb\t05\nc\t03782079\n#count\t3\n")
            try CLI.fail(["dump"] + store + ["--crypt-key", "K1"])
            try CLI.succeed(["rekey"] + store + ["--crypt-key", "K2", "--new-key", "K3", "--new-aes256"])
            #expect(try CLI.succeed(["dump"] + store + ["--crypt-key", "K3", "--aes256"]).stdout == dumpK2.stdout)
            try CLI.fail(["dump"] + store + ["--crypt-key", "K3"])
            try CLI.succeed(["rekey"] + store + ["--crypt-key", "K3", "--aes256"])
            #expect(try CLI.succeed(["dump"] + store).stdout == dumpK2.stdout)
            try CLI.fail(["rekey"] + store + ["--crypt-key", "wrong", "--new-key", "X"])
            #expect(try CLI.succeed(["dump"] + store).stdout == dumpK2.stdout, "a failed rekey changes nothing")
        }
    }
}
