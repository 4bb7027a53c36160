// The documentation's Swift examples compile and run as written.
//
// Every ```swift block of README.md, docs/*.md and the DocC catalogs becomes a program in a scratch
// package that depends on this one by path, as a user's would; the package is built and each
// program is run in a fresh directory, and must exit 0. A block marked `<!-- partial -->` on the
// line before it is a fragment and is skipped. A block marked `<!-- file: PATH -->` must equal the
// file PATH, which the integration packages build and run.
//
// The integration packages' READMEs (Integrations/*/README.md) need frameworks this package does
// not depend on, so their blocks cannot be built here: each must be a `<!-- file: PATH -->` copy of
// a Swift file its own package builds (and equal it), or be marked `<!-- partial -->`.

import Foundation
import MappedKVProcessTestSupport
import Testing

@Suite("Documentation examples", .serialized)
struct DocumentationExampleTests {
    /// The package's root directory.
    static let packageRoot: URL = {
        var root = URL(fileURLWithPath: #filePath)
        for _ in 0..<3 { root.deleteLastPathComponent() }
        return root
    }()

    /// The Markdown documents whose examples are checked, relative to the package root.
    static var documents: [String] {
        let fileManager = FileManager.default
        var documents = ["README.md"]
        let docs = packageRoot.appendingPathComponent("docs")
        for name in (try? fileManager.contentsOfDirectory(atPath: docs.path)) ?? [] where name.hasSuffix(".md") {
            documents.append("docs/" + name)
        }
        let sources = packageRoot.appendingPathComponent("Sources")
        if let walker = fileManager.enumerator(atPath: sources.path) {
            for case let path as String in walker where path.contains(".docc/") && path.hasSuffix(".md") {
                documents.append("Sources/" + path)
            }
        }
        return documents.sorted()
    }

    /// Every Swift block of the documents.
    static func examples() throws -> [SwiftExample] {
        try documents.flatMap { document in
            let text = try String(contentsOf: packageRoot.appendingPathComponent(document), encoding: .utf8)
            return SwiftExample.blocks(in: text, document: document)
        }
    }

    @Test func blocksAreFoundAndPartialOnesAreMarked() {
        let markdown = """
            ```swift
            print(1)
            ```
            <!-- partial -->
            ```swift
            store.set(x)
            ```
            ```sh
            ls
            ```
            <!-- file: Integrations/app/main.swift -->
            ```swift
            app()
            ```
            """
        let blocks = SwiftExample.blocks(in: markdown, document: "X.md")
        #expect(blocks.map(\.line) == [1, 5, 12])
        #expect(blocks.map(\.isPartial) == [false, true, false])
        #expect(blocks.map(\.copiedFile) == [nil, nil, "Integrations/app/main.swift"])
        #expect(blocks.first?.code == "print(1)\n")
    }

    /// The integration packages' READMEs, relative to the package root.
    static var integrationReadmes: [String] {
        let integrations = packageRoot.appendingPathComponent("Integrations")
        let names = (try? FileManager.default.contentsOfDirectory(atPath: integrations.path)) ?? []
        return names.sorted().map { "Integrations/\($0)/README.md" }.filter {
            FileManager.default.fileExists(atPath: packageRoot.appendingPathComponent($0).path)
        }
    }

    @Test func everyBlockOfAnIntegrationReadmeCopiesAFileItBuildsOrIsPartial() throws {
        let readmes = Self.integrationReadmes
        try #require(!readmes.isEmpty, "no README in Integrations/")
        for readme in readmes {
            let text = try String(contentsOf: Self.packageRoot.appendingPathComponent(readme), encoding: .utf8)
            let integration = String(readme.dropLast("README.md".count))
            for example in SwiftExample.blocks(in: text, document: readme) where !example.isPartial {
                let place = "\(readme):\(example.line)"
                guard let path = example.copiedFile else {
                    Issue.record(
                        "\(place): mark the block <!-- file: PATH --> (a file \(integration) builds) or <!-- partial -->"
                    )
                    continue
                }
                // Integrations/<package>/Sources/<target>/...swift, with <target> in the package's manifest.
                let parts = path.dropFirst(integration.count).split(separator: "/")
                let manifest = try? String(
                    contentsOf: Self.packageRoot.appendingPathComponent(integration + "Package.swift"), encoding: .utf8)
                let isBuilt =
                    path.hasPrefix(integration) && path.hasSuffix(".swift") && parts.count >= 3
                    && ["Sources", "Tests"].contains(parts[0])
                    && manifest?.contains("name: \"\(parts[1])\"") == true
                #expect(isBuilt, "\(place) copies \(path), which is no Swift file of a target of \(integration)")
                let file = try? String(contentsOf: Self.packageRoot.appendingPathComponent(path), encoding: .utf8)
                #expect(file != nil, "\(place) copies \(path), which does not exist")
                if let file { #expect(file == example.code, "\(place) differs from \(path)") }
            }
        }
    }

    @Test func everyBlockMarkedAsACopyEqualsItsFile() throws {
        for example in try Self.examples() {
            guard let path = example.copiedFile else { continue }
            let file = Self.packageRoot.appendingPathComponent(path)
            let text = try? String(contentsOf: file, encoding: .utf8)
            #expect(text != nil, "\(example.document):\(example.line) copies \(path), which does not exist")
            if let text {
                #expect(text == example.code, "\(example.document):\(example.line) differs from \(path)")
            }
        }
    }

    @Test(.timeLimit(.minutes(30)))
    func everyCompleteSwiftBlockBuildsAndRuns() throws {
        let examples = try Self.examples().filter { !$0.isPartial && $0.copiedFile == nil }
        try #require(!examples.isEmpty, "no complete Swift example in \(Self.documents)")
        let directory = Self.packageRoot.appendingPathComponent(".build-examples")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let package = ExamplePackage(directory: directory, examples: examples)
        try package.write(
            packageRoot: Self.packageRoot,
            products: ["MappedKV", "MappedKVCache", "MappedKVCollections", "MappedKVFormat"])

        let build = try Subprocess.run(
            "swift", ["build", "--package-path", directory.path, "--scratch-path", directory.path + "/.build"],
            in: directory, timeout: 1_500)
        guard build.status == 0 else {
            Issue.record("the examples do not build:\n\(Self.locate(build.output, examples))")
            return
        }
        for example in examples {
            let scratch = try TemporaryDirectory()
            defer { scratch.remove() }
            let program = directory.appendingPathComponent(".build/debug/\(example.targetName)").path
            let run = try Subprocess.run(program, [], in: URL(fileURLWithPath: scratch.path), timeout: 120)
            #expect(run.status == 0, "\(example.document):\(example.line) exited with \(run.status):\n\(run.output)")
        }
    }

    /// The build output with each example's file and line turned into its document's.
    static func locate(_ output: String, _ examples: [SwiftExample]) -> String {
        var text = output
        for example in examples {
            let file = "Sources/\(example.targetName)/main.swift:"
            while let range = text.range(of: file) {
                let digits = text[range.upperBound...].prefix { $0.isNumber }
                let line = (Int(digits) ?? 0) + example.line
                text.replaceSubrange(
                    range.lowerBound..<text.index(range.upperBound, offsetBy: digits.count),
                    with: "\(example.document):\(line)")
            }
        }
        return text
    }
}

/// A child process run to completion, its standard output and error together in a file.
enum Subprocess {
    struct Result {
        var status: Int32
        var output: String
    }

    /// Runs `program` (looked up on `PATH` unless it is a path) with `arguments` in `directory`;
    /// kills it after `timeout` seconds.
    static func run(_ program: String, _ arguments: [String], in directory: URL, timeout: Double) throws -> Result {
        let scratch = try TemporaryDirectory()
        defer { scratch.remove() }
        let outputPath = try scratch.write("", to: "output")
        let output = try FileHandle(forWritingTo: URL(fileURLWithPath: outputPath))
        defer { try? output.close() }
        let process = Process()
        if program.contains("/") {
            process.executableURL = URL(fileURLWithPath: program)
            process.arguments = arguments
        } else {
            process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            process.arguments = [program] + arguments
        }
        process.currentDirectoryURL = directory
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = output
        process.standardError = output
        let finished = DispatchSemaphore(value: 0)
        process.terminationHandler = { _ in finished.signal() }
        try process.run()
        if finished.wait(timeout: .now() + timeout) == .timedOut {
            process.terminate()
            finished.wait()
        }
        let text = (try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? ""
        return Result(status: process.terminationStatus, output: text)
    }
}
