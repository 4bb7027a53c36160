import CoreMetrics
import Foundation
import MappedKVFormat
import MetricsTestKit
import Testing

@testable import MappedKV

/// What a store reports through swift-metrics when its configuration asks for it, and that it
/// creates nothing when it does not. Each test injects its own `TestMetrics` factory; none touches
/// the global `MetricsSystem`.
@Suite("Store metrics")
struct StoreMetricsTests {
    func options(_ factory: TestMetrics) -> MetricsOptions {
        MetricsOptions(labelPrefix: "kv", dimensions: [("app", "tests")], factory: factory)
    }

    func total(_ factory: TestMetrics, _ label: String, _ dimensions: [(String, String)] = []) -> Int64 {
        factory.counterTotal(label: label, dimensions: dimensions + [("app", "tests")])
    }

    @Test("operations are counted by kind, one per call on the handle")
    func operations() throws {
        let dir = TemporaryDirectory("metrics-ops")
        let factory = TestMetrics()
        let store = try MappedKV(id: "s", directory: dir.path, configuration: Configuration(metrics: options(factory)))
        try store.set(Int32(1), forKey: "a")
        try store.set("two", forKey: "b")
        try store.set([UInt8]([3]), forKey: "c")
        #expect(try store.int32(forKey: "a") == 1)
        #expect(try store.string(forKey: "missing") == nil)
        #expect(try store.payload(forKey: "b") != nil)
        #expect(try store.withBytes(forKey: "c") { $0.count } == 1)
        try store.removeValue(forKey: "a")
        #expect(try store.removeValues(forKeys: ["b", "c"]) == 2)
        try store.batch { batch in try batch.set(Int32(4), forKey: "d") }

        #expect(total(factory, "kv.store.operations", [("op", "set")]) == 3)
        #expect(total(factory, "kv.store.operations", [("op", "get")]) == 4)
        #expect(total(factory, "kv.store.operations", [("op", "remove")]) == 2)
        #expect(total(factory, "kv.store.operations", [("op", "batch")]) == 1)
        // Every metric carries the options' dimensions after its own.
        let counter = try factory.expectCounter("kv.store.operations", [("op", "set"), ("app", "tests")])
        #expect(counter.values.count == 3)
    }

    @Test("a full write-back is counted once")
    func writeBack() throws {
        let dir = TemporaryDirectory("metrics-writeback")
        let factory = TestMetrics()
        let store = try MappedKV(id: "s", directory: dir.path, configuration: Configuration(metrics: options(factory)))
        for i in 0..<10 { try store.set("value-\(i)", forKey: "k\(i)") }
        let before = total(factory, "kv.store.writebacks")
        try store.rekey(to: nil)  // a full write-back with a fresh sequence
        #expect(total(factory, "kv.store.writebacks") == before + 1)
        try store.set("more", forKey: "k0")  // an append: no write-back
        #expect(total(factory, "kv.store.writebacks") == before + 1)
    }

    @Test("damage found at open is counted with its kind and the decision, and the handler still decides")
    func damage() throws {
        let dir = TemporaryDirectory("metrics-damage")
        do {
            let store = try MappedKV(id: "s", directory: dir.path)
            for i in 0..<10 { try store.set("value-\(i)", forKey: "k\(i)") }
            store.close()
        }
        var data = try #require(fileBytes(dir.file("s")))
        let stored = try MetaInfo(parsing: try #require(fileBytes(dir.file("s.crc"))))
        data[4 + Int(stored.actualSize) - 1] ^= 0x01  // inside the last record: a CRC mismatch
        try writeFile(dir.file("s"), data)

        let factory = TestMetrics()
        let events = EventLog()
        let configuration = Configuration(
            recoveryHandler: { event in
                events.append(event)
                return .discard
            }, metrics: options(factory))
        let store = try MappedKV(id: "s", directory: dir.path, configuration: configuration)
        #expect(events.all.count == 1)
        #expect(try store.count == 0)  // the handler's decision was taken
        #expect(total(factory, "kv.store.damage", [("kind", "crcMismatch"), ("decision", "discard")]) == 1)
        #expect(store.recoveryReport?.decision == .discard)
    }

    @Test("without options a store makes no metric, even with a factory in reach")
    func nothingWithoutOptions() throws {
        let dir = TemporaryDirectory("metrics-off")
        let factory = TestMetrics()
        try withMetricsFactory(factory) { () throws -> Void in
            let store = try MappedKV(id: "s", directory: dir.path)
            #expect(store.metrics == nil)
            for i in 0..<10 { try store.set("value-\(i)", forKey: "k\(i)") }
            _ = try store.string(forKey: "k1")
            try store.removeValue(forKey: "k2")
            try store.rekey(to: nil)
            store.close()
        }
        #expect(factory.counters.isEmpty && factory.meters.isEmpty && factory.recorders.isEmpty)
        // The same calls with options and no factory of their own use the factory in reach: the
        // check above could have seen metrics.
        try withMetricsFactory(factory) { () throws -> Void in
            let store = try MappedKV(
                id: "s", directory: dir.path, configuration: Configuration(metrics: MetricsOptions(labelPrefix: "on")))
            _ = try store.string(forKey: "k1")
            store.close()
        }
        #expect(factory.counterTotal(label: "on.store.operations", dimensions: [("op", "get")]) == 1)
    }
}
