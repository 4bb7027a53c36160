// `mappedkv --version` reports the library's version, which the changelog names.

import Foundation
import MappedKV
import MappedKVProcessTestSupport
import Testing

@Suite("Version")
struct VersionTests {
    @Test func theToolPrintsTheLibraryVersion() throws {
        let result = try CLI.succeed(["--version"])
        #expect(result.stdout == MappedKV.version + "\n")
    }

    @Test func theChangelogNamesTheVersion() throws {
        var root = URL(fileURLWithPath: #filePath)
        for _ in 0..<3 { root.deleteLastPathComponent() }
        let changelog = try String(contentsOf: root.appendingPathComponent("CHANGELOG.md"), encoding: .utf8)
        #expect(changelog.contains("## \(MappedKV.version)"))
    }
}
