// The storage commands: backup, restore, rm-store and ls, through the real binary.

import Foundation
import MappedKVProcessTestSupport
import Testing

@Suite("Storage commands")
struct StorageCommandTests {
    @Test func backupThenRestoreBringsBackTheBackedUpState() throws {
        try TemporaryDirectory.with { (tmp) throws -> Void in
            let root = tmp.path("root")
            let backups = tmp.path("backups")
            try CLI.succeed(["set", "--create"] + CLI.store(root, "prefs") + ["a", "1"])
            try CLI.succeed(["set", "--create"] + CLI.store(root, "prefs") + ["b", "2"])
            let saved = try CLI.succeed(["dump"] + CLI.store(root, "prefs")).stdout
            #expect(
                try CLI.succeed(["backup", "--root", root, "--id", "prefs", "--to", backups]).stdout
                    == "backed up 1 store\n")
            try CLI.succeed(["set", "--create"] + CLI.store(root, "prefs") + ["c", "3"])
            try CLI.succeed(["remove"] + CLI.store(root, "prefs") + ["a"])
            #expect(try CLI.succeed(["dump"] + CLI.store(root, "prefs")).stdout != saved)
            try CLI.succeed(["restore", "--root", root, "--id", "prefs", "--from", backups])
            #expect(try CLI.succeed(["dump"] + CLI.store(root, "prefs")).stdout == saved)
            try CLI.succeed(["verify"] + CLI.store(root, "prefs"))
        }
    }

    @Test func lsListsEveryStoreWithItsSizesAndRmStoreRemovesOne() throws {
        try TemporaryDirectory.with { (tmp) throws -> Void in
            let root = tmp.path("root")
            try CLI.succeed(["set", "--create"] + CLI.store(root, "one") + ["k", "v"])
            try CLI.succeed(["set", "--create"] + CLI.store(root, "two") + ["k", "v"])
            let listed = try CLI.succeed(["ls", "--root", root]).stdout.split(separator: "\n")
            #expect(listed.map { $0.split(separator: "\t").first.map(String.init) } == ["one", "two"])
            for line in listed {
                let fields = line.split(separator: "\t")
                let dataSize = try #require(Int(fields[1]))
                let onDisk = try FileManager.default.attributesOfItem(atPath: root + "/" + fields[0])[.size] as? Int
                #expect(fields.count == 3 && dataSize == onDisk && (Int(fields[2]) ?? 0) > 0, "\(line)")
            }
            #expect(try CLI.succeed(["rm-store", "--root", root, "--id", "one"]).stdout == "removed one\n")
            #expect(try CLI.succeed(["ls", "--root", root]).stdout.hasPrefix("two\t"))
            #expect(!FileManager.default.fileExists(atPath: root + "/one.crc"))
            let missing = try CLI.fail(["rm-store", "--root", root, "--id", "one"])
            #expect(missing.status == 3 && missing.stderr.contains("no store 'one'"), "\(missing)")
        }
    }

    @Test func backupNeedsEitherAnIDOrAll() throws {
        try TemporaryDirectory.with { (tmp) throws -> Void in
            let result = try CLI.fail(["backup", "--root", tmp.path("root"), "--to", tmp.path("b")])
            #expect(result.stderr.contains("--id ID or --all"), "\(result)")
        }
    }
}
