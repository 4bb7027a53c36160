import Foundation
import MappedKV
import MappedKVCollections
import MappedKVProcessTestSupport
import Testing

/// Random sequences of put, remove, clear and index add and removal split between this process and
/// a `mappedkv collections-child` process on one store, both holding it open with their indexes in
/// memory; and a child killed with SIGKILL in the middle of indexed puts. After every step (and
/// after every kill) the bucket's entries, pages, indexes, unique constraint and count agree with
/// a plain model, in this process and in the other. A failure names its seed.
@Suite("collections across processes, against a model", .serialized)
struct CollectionsProcessModelTests {
    static func store(_ root: String) -> [String] { CLI.store(root, "model") + ["--multi-process"] }

    static let splitSeeds: [UInt64] = (0..<8).map { 0x2B_0000 + $0 }

    @Test("operations split between two processes leave both agreeing with the model", arguments: splitSeeds)
    func splitSequence(seed: UInt64) throws {
        try TemporaryDirectory.with { tmp in
            let root = tmp.path("root")
            let child = try CollectionsChild(Self.store(root))
            defer { child.finish() }
            let collections = try CollectionStore(
                id: "model", directory: root, configuration: Configuration(isMultiProcess: true))
            defer { collections.close() }
            let bucket = collections.bucket("b", serializer: RawEntrySerializer())
            var generator = SeededRandom(seed: seed)
            func pick(_ count: Int) -> Int { Int(generator.next() % UInt64(count)) }
            // One of "é" and "e\u{301}" only: the model is a `[String: _]`, which holds them as one key.
            let keys = (0..<12).map { "k\($0)" } + ["é", "key:with:colons", "kkkkkkkk-long"]
            var model = BucketProcessModel()
            for step in 0..<70 {
                let operation = BucketProcessModel.random(pick, keys: keys)
                let byChild = pick(2) == 0
                let context: Comment = "seed \(seed) step \(step) (\(byChild ? "child" : "parent")): \(operation)"
                let expected = model.apply(operation)
                let answer =
                    byChild
                    ? try child.send(operation.fields(bucket: "b"))
                    : try BucketProcessModel.perform(operation, on: bucket)
                #expect(answer == expected, context)
                // This process: entries page by page, count, keys, indexes.
                let stored = try BucketProcessModel.read(bucket)
                #expect(stored.matches(model), "\(context): \(stored.entries) vs \(model.entries)")
                try model.expectConsistent(bucket, context)
                // The other process, every few steps: its count, key pages and index counts.
                if step % 5 == 4 {
                    #expect(try child.send(["count", "b"]) == "\(model.entries.count)", context)
                    let sorted = BucketProcessModel.sorted(model.entries.keys)
                    #expect(try child.send(["keys", "b", "100"]) == sorted.joined(separator: "\t"), context)
                    let bound = pick(6)
                    let expectedCount =
                        model.indexes.contains("n")
                        ? "\(model.entries.values.filter { $0.n >= bound }.count)" : "unknown"
                    #expect(try child.send(["count-where", "b", "n", "\(bound)"]) == expectedCount, context)
                }
            }
            #expect(child.finish() == 0, "seed \(seed): the child failed")
        }
    }

    static let killSeeds: [UInt64] = (0..<6).map { 0x4B_0000 + $0 }

    @Test(
        "a writer killed during indexed puts leaves entries, indexes, uniqueness and count in step",
        arguments: killSeeds)
    func killedWriter(seed: UInt64) throws {
        try TemporaryDirectory.with { tmp in
            let root = tmp.path("root")
            let store = Self.store(root)
            var generator = SeededRandom(seed: seed)
            func pick(_ count: Int) -> Int { Int(generator.next() % UInt64(count)) }
            // The writer's script: both indexes, then puts (conflicting ones included) and removes.
            var operations: [BucketProcessModel.Operation] = [.addIndex("n"), .addIndex("u")]
            let keys = (0..<400).map { "k\($0)" }
            for _ in 0..<4_000 {
                operations.append(
                    pick(8) == 0
                        ? .remove(keys[pick(keys.count)]) : .put(keys[pick(keys.count)], n: pick(50), u: pick(3_000)))
            }
            let script = operations.map { $0.fields(bucket: "b").joined(separator: "\t") }.joined(separator: "\n")
            let input = try tmp.write(script + "\n", to: "script")
            // This process holds the store open during the writes, so its indexes follow them.
            let collections = try CollectionStore(
                id: "model", directory: root,
                configuration: Configuration(isMultiProcess: true, createsIfMissing: true))
            defer { collections.close() }
            let bucket = collections.bucket("b", serializer: RawEntrySerializer())

            let writer = Process()
            let output = Pipe()
            writer.executableURL = try CLI.binary.get()
            writer.arguments = ["collections-child"] + store
            writer.standardInput = try FileHandle(forReadingFrom: URL(fileURLWithPath: input))
            writer.standardOutput = output
            writer.standardError = FileHandle.nullDevice
            try writer.run()
            // Killed once it has answered a random number of operations (it is then in the middle
            // of the next one, or between two).
            let target = 3 + pick(operations.count / 2)
            var answers: [Substring] = []
            var pending = Data()
            while answers.count < target + 1 {  // "ready" comes first
                let chunk = output.fileHandleForReading.availableData
                if chunk.isEmpty { break }
                pending.append(chunk)
                if let last = pending.lastIndex(of: UInt8(ascii: "\n")) {
                    answers += String(decoding: pending[...last], as: UTF8.self).split(separator: "\n")
                    pending = Data(pending[(last + 1)...])
                }
            }
            kill(writer.processIdentifier, SIGKILL)
            writer.waitUntilExit()
            pending.append(output.fileHandleForReading.readDataToEndOfFile())
            answers += String(decoding: pending, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false)
                .dropLast()
            let acknowledged = Array(answers.dropFirst())
            let context: Comment = "seed \(seed): killed after \(acknowledged.count) answers"

            // Every answered operation is in the store, and the one in flight is all there or not at all.
            var before = BucketProcessModel()
            for (position, operation) in operations.prefix(acknowledged.count).enumerated() {
                #expect(String(acknowledged[position]) == before.apply(operation), "\(context): operation \(position)")
            }
            var after = before
            if acknowledged.count < operations.count { _ = after.apply(operations[acknowledged.count]) }
            let stored = try BucketProcessModel.read(bucket)
            #expect(stored.matches(before) || stored.matches(after), "\(context): the store matches neither state")
            try stored.expectConsistent(bucket, context)
            // A conflicting put is still refused: the unique index holds after the kill.
            if let (key, value) = stored.entries.first(where: { _ in true }) {
                #expect(
                    try BucketProcessModel.perform(.put("other-\(key)", n: 0, u: value.u), on: bucket) == "conflict",
                    context)
            }
            // A process that opens the store now builds its indexes from the files: it agrees.
            #expect(
                try CLI.succeed(["bucket", "count"] + store + ["b"]).stdout == "\(stored.entries.count)\n", context)
            let indexed = try CLI.succeed(["bucket", "query"] + store + ["b", "--where", "n", ">=", "0", "--count"])
            #expect(indexed.stdout == "\(stored.entries.count)\n", context)
            let verify = try CLI.run(["verify"] + store)
            #expect(verify.succeeded, "\(context): \(verify)")
            print("killed writer, seed \(seed): \(acknowledged.count) of \(operations.count) operations answered")
        }
    }
}
