import Foundation
import Testing

/// The golden stores written by MMKV 2.4.2, in `<package>/Vectors/mmkv-2.4.2/`.
///
/// Tests read these files in place; anything that may write works on a copy
/// (``TemporaryDirectory/copyStore(from:as:)``).
struct GoldenCase: Sendable, CustomTestStringConvertible {
    /// The case's directory name, e.g. `a_plain`.
    let name: String
    /// The store ID MMKV used.
    let id: String

    var testDescription: String { "\(name) (\(id))" }

    /// The unencrypted cases this version of the CLI can open.
    static let plain: [GoldenCase] = [
        GoldenCase(name: "a_plain", id: "case_a"),
        GoldenCase(name: "c_overwrites", id: "case_c"),
    ]

    /// `Vectors/mmkv-2.4.2`, found from this source file's location.
    static let vectorsDirectory: URL = {
        var url = URL(fileURLWithPath: #filePath)
        // …/Tests/MappedKVCLITests/Support/Vectors.swift -> package root
        for _ in 0..<4 { url.deleteLastPathComponent() }
        return url.appendingPathComponent("Vectors").appendingPathComponent("mmkv-2.4.2")
    }()

    var directory: URL { Self.vectorsDirectory.appendingPathComponent(name) }
    /// The store's root directory (holds `<id>` and `<id>.crc`).
    var root: String { directory.appendingPathComponent("root").path }
    var dataPath: String { directory.appendingPathComponent("root").appendingPathComponent(id).path }
    var metaPath: String { dataPath + ".crc" }

    /// The `.expect` file's bytes.
    func expected() throws -> Data {
        try Data(contentsOf: directory.appendingPathComponent("\(id).expect"))
    }

    /// `script.txt` as text.
    func script() throws -> String {
        try String(contentsOf: directory.appendingPathComponent("script.txt"), encoding: .utf8)
    }

    /// `info.txt` as a dictionary (`count`, `totalSize`, `actualSize`, `encrypted`).
    func info() throws -> [String: String] {
        let text = try String(contentsOf: directory.appendingPathComponent("info.txt"), encoding: .utf8)
        return TabSeparated.parse(text)
    }
}

/// `name<TAB>value` lines.
enum TabSeparated {
    /// The lines as a dictionary; a later line with the same name wins.
    static func parse(_ text: String) -> [String: String] {
        var result: [String: String] = [:]
        for line in text.split(separator: "\n") {
            let fields = line.split(separator: "\t", maxSplits: 1, omittingEmptySubsequences: false)
            guard fields.count == 2 else { continue }
            result[String(fields[0])] = String(fields[1])
        }
        return result
    }
}
