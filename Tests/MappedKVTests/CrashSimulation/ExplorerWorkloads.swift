import Foundation
import Logging
import MappedKVFormat

@testable import MappedKV
@testable import MappedKVCache

/// The store workloads the crash-state explorer records: each a seeded random sequence of one
/// kind of operation, with durability points (`sync()`, `close()`) among them.
enum ExplorerWorkload: String, CaseIterable, Sendable {
    case appends, expansion, writeBack, trim, clearAll, rekey, encrypted, expiry, batches, transactions
    case multiProcess, everyWrite, collections, cache

    /// The ID of the store the workload records: the cache's manifest, or `s`.
    var storeID: String { self == .cache ? DiskCache.manifestID : "s" }

    static let cryptKey = CryptKey(Array("explorer-key".utf8))
    static let otherKey = CryptKey(Array("explorer-key-2".utf8))

    /// Runs the workload on a fresh store in `directory`, recording every write.
    func record(in directory: String, seed: UInt64) throws -> ExplorerRecording {
        var random = SplitMix64(seed: seed ^ rawValue.hashValueStable)
        let key: CryptKey? = self == .encrypted ? Self.cryptKey : nil
        let recorder = ExplorerRecorder(directory: directory, key: key)
        if self == .collections { return try CollectionsWorkload.record(in: directory, seed: seed) }
        if self == .cache { return try CacheWorkload.record(in: directory, seed: seed) }
        if self == .multiProcess { return try recordTwoWriters(recorder, directory: directory, &random) }
        let clock = ManualClock(1_800_000_000)
        let configuration = Configuration(
            cryptKey: key, clock: clock.expiryClock, durability: self == .everyWrite ? .everyWrite : .atSync)
        let store = try MappedKV(id: "s", directory: directory, configuration: configuration)
        let expiry = self == .expiry
        func done() throws { recorder.acknowledge(try explorerContents(of: store, expiry: expiry)) }
        func value(_ step: Int, _ length: Int) -> String { "v\(step)-" + String(repeating: "x", count: length) }
        func someKey(_ count: UInt64 = 24) -> String { "key-\(random.next() % count)" }

        if expiry {
            try store.enableKeyExpiry()
            try done()
        }
        let operations = 120
        for step in 0..<operations {
            switch self {
            case .appends, .encrypted, .everyWrite:
                switch random.next() % 10 {
                case 0..<6: try store.set(value(step, Int(random.next() % 200) + 1), forKey: someKey())
                case 6, 7: try store.set(Int64(bitPattern: random.next()), forKey: someKey())
                default: try store.removeValue(forKey: someKey())
                }
            case .expansion:
                // Values that grow, so the file doubles again and again.
                try store.set(value(step, step * 40 + Int(random.next() % 64)), forKey: "big-\(step)")
            case .writeBack:
                // A few hot keys overwritten: compactions, and the store emptied and refilled.
                if random.next() % 25 == 0 {
                    _ = try store.removeValues(forKeys: (0..<4).map { "hot-\($0)" })
                } else {
                    try store.set(value(step, Int(random.next() % 600) + 100), forKey: "hot-\(random.next() % 4)")
                }
            case .trim:
                switch random.next() % 10 {
                case 0..<6: try store.set(value(step, Int(random.next() % 900) + 1), forKey: someKey(40))
                case 6, 7, 8: try store.removeValue(forKey: someKey(40))
                default: try store.trim()
                }
            case .clearAll:
                if random.next() % 12 == 0 {
                    try store.clearAll()
                } else {
                    try store.set(value(step, Int(random.next() % 300) + 1), forKey: someKey())
                }
            case .rekey:
                if random.next() % 15 == 0 {
                    let next: CryptKey? =
                        switch random.next() % 3 {
                        case 0: nil
                        case 1: Self.cryptKey
                        default: Self.otherKey
                        }
                    recorder.key = next
                    try store.rekey(to: next)
                } else {
                    try store.set(value(step, Int(random.next() % 200) + 1), forKey: someKey())
                }
            case .expiry:
                if step == operations / 2 { clock.advance(100) }
                switch random.next() % 10 {
                case 0..<5:
                    try store.set(
                        value(step, Int(random.next() % 200) + 1), forKey: someKey(),
                        expiresAfter: .seconds(Int(random.next() % 20) + 1))
                case 5, 6: try store.set(value(step, 8), forKey: someKey())
                case 7: try store.trim()
                default: try store.removeValue(forKey: someKey())
                }
            case .batches:
                try store.batch { batch in
                    for index in 0..<Int(random.next() % 6) + 1 {
                        if random.next() % 4 == 0 {
                            try batch.removeValue(forKey: someKey())
                        } else {
                            try batch.set(value(step * 10 + index, Int(random.next() % 120) + 1), forKey: someKey())
                        }
                    }
                }
            case .transactions:
                // Each write inside the section is its own step: the section is atomic against other
                // threads and processes, not against a crash.
                try store.withExclusiveLock { transaction in
                    let count = try transaction.int64(forKey: "counter") ?? 0
                    try transaction.set(count + 1, forKey: "counter")
                    try done()
                    try transaction.set(value(step, Int(random.next() % 200) + 1), forKey: someKey())
                }
            case .multiProcess, .collections, .cache: break
            }
            try done()
            if random.next() % 9 == 0 {
                try store.sync()
                recorder.durabilityPoint()
            }
            if self == .everyWrite { recorder.durabilityPoint() }
        }
        store.close()
        recorder.durabilityPoint()
        return recorder.finish(clock: clock.expiryClock, checkTime: expiry ? clock.now : nil)
    }

    /// Two instances of the store in multi-process mode, each with its own open files and locks
    /// as a second process has, writing in turn and catching up with each other.
    private func recordTwoWriters(
        _ recorder: ExplorerRecorder, directory: String, _ random: inout SplitMix64
    ) throws -> ExplorerRecording {
        let location = try StoreLocation(id: "s", directory: directory)
        let configuration = Configuration(isMultiProcess: true)
        let writers = try (0..<2).map { _ in
            try StoreCore(
                location: location, configuration: configuration, logger: Logger(label: "explorer"),
                signal: ChangeSignal())
        }
        func contents(_ core: StoreCore) throws -> [String: [UInt8]] {
            Dictionary(try core.exportEntries().map { ($0.key, $0.payload) }, uniquingKeysWith: { $1 })
        }
        for step in 0..<120 {
            let writer = writers[Int(random.next() % 2)]
            let key = "key-\(random.next() % 24)"
            if random.next() % 5 == 0 {
                try writer.removeValue(forKey: key)
            } else {
                let payload = [UInt8]("w\(step)-".utf8) + [UInt8](repeating: 0x61, count: Int(random.next() % 300) + 1)
                try payload.withUnsafeBytes { try writer.setPayload($0, forKey: key) }
            }
            recorder.acknowledge(try contents(writer))
            if random.next() % 9 == 0 {
                try writers[Int(random.next() % 2)].sync()
                recorder.durabilityPoint()
            }
        }
        for writer in writers { writer.close() }
        recorder.durabilityPoint()
        return recorder.finish()
    }
}

extension String {
    /// A hash that is the same in every run (Swift's `hashValue` is seeded per process).
    var hashValueStable: UInt64 { utf8.reduce(5381) { ($0 &* 33) &+ UInt64($1) } }
}
