import Foundation
import MappedKVProcessTestSupport
import Testing

/// `mappedkv demo`.
@Suite("demo")
struct DemoTests {
    @Test("demo --root TMP exits 0, reports the values intact and leaves a sound store")
    func demo() throws {
        try TemporaryDirectory.with { tmp in
            let root = tmp.path("demo")
            let result = try CLI.succeed(["demo", "--root", root])
            #expect(result.stdout.contains("intact"), "\(result)")
            #expect(!result.stdout.contains("WRONG"), "\(result)")
            #expect(result.stdout.contains(root), "the demo should name its directory: \(result)")
            #expect(FileManager.default.fileExists(atPath: root + "/demo"))
            #expect(FileManager.default.fileExists(atPath: root + "/demo.crc"))
            let verify = try CLI.succeed(["verify"] + CLI.store(root, "demo"))
            #expect(verify.stdout.contains("262 keys"), "\(verify)")
            #expect(
                try CLI.succeed(["get", "--type", "string"] + CLI.store(root, "demo") + ["string"]).stdout
                    == "hello, MMKV ✓\n")
        }
    }

    @Test("demo can run twice on the same root")
    func demoTwice() throws {
        try TemporaryDirectory.with { tmp in
            let root = tmp.path("demo")
            try CLI.succeed(["demo", "--root", root])
            let again = try CLI.succeed(["demo", "--root", root])
            #expect(again.stdout.contains("intact"), "\(again)")
        }
    }
}
