import Foundation
import MappedKVFormat
import Testing

@testable import MappedKV

/// Random damage to a store's files: bit flips, truncations, extensions, zeroed pages, garbage,
/// short or missing meta, absurd sizes, for plain and encrypted stores. For every case the open
/// must not crash or hang; the handler must be told whenever what loads differs from the store's
/// real contents; no key may hold a value it never held; `.fail` changes nothing; `.recover` and
/// `.discard` keep a byte-exact copy of the damaged files and leave a store that reopens cleanly.
@Suite("Random damage")
struct RandomDamageTests {
    static let casesPerMode = 5_000

    /// One kind of damage.
    enum Damage: CaseIterable {
        case dataBitFlips, metaBitFlips, truncatedData, extendedData, zeroedPage, garbageRange
        case garbageMeta, shortMeta, absurdSizes, missingMeta, missingData
    }

    @Test("10,000 damaged stores: no crash, no invented value, the handler is told", arguments: [false, true])
    func randomDamage(encrypted: Bool) throws {
        let recording = TemporaryDirectory("damage-rec")
        let replay = TemporaryDirectory("damage-replay")
        let key = encrypted ? CryptKey(Array("random-damage".utf8)) : nil
        let workload = try RecordedWorkload.record(
            in: recording.path, key: key, seed: encrypted ? 5 : 3, operations: 120)
        let original = try #require(workload.states.last)
        let history = workload.history
        let data = try #require(fileBytes(recording.file("s")))
        let meta = try #require(fileBytes(recording.file("s.crc")))
        var random = SplitMix64(seed: encrypted ? 0xDA_A6E : 0xDA_A6F)
        var failures: [String] = []
        var told = 0
        var uncovered = 0
        var recovered = 0

        for number in 0..<Self.casesPerMode {
            let damage = Damage.allCases[Int(random.next() % UInt64(Damage.allCases.count))]
            var damagedData: [UInt8]? = data
            var damagedMeta: [UInt8]? = meta
            // Whether the damage hit a meta field no checksum covers (see `damageMeta`).
            var hitsUncoveredField = false
            Self.apply(
                damage, data: &damagedData, meta: &damagedMeta, encrypted: encrypted,
                uncovered: &hitsUncoveredField, &random)
            if hitsUncoveredField { uncovered += 1 }
            try Self.materialize(data: damagedData, meta: damagedMeta, in: replay.path)
            let decision: RecoveryDecision =
                switch random.next() % 10 {
                case 0..<7: .recover
                case 7, 8: .discard
                default: .fail
                }
            let readOnly = random.next() % 5 == 0
            let events = EventLog()
            let label = "case \(number) (\(damage), \(decision)\(readOnly ? ", read-only" : ""))"
            let configuration = Configuration(
                isReadOnly: readOnly, isMultiProcess: random.next() % 3 == 0, cryptKey: key,
                recoveryHandler: {
                    events.append($0)
                    return decision
                })
            var store: MappedKV?
            do {
                store = try MappedKV(id: "s", directory: replay.path, configuration: configuration)
            } catch {
                if !events.all.isEmpty && decision != .fail { failures.append("\(label): recovery failed: \(error)") }
                // Without a key, damage to a store whose meta holds an IV (garbage over a plain
                // store's IV bytes) is a missing key, and no handler is asked (docs/FORMAT.md 7.5a).
                let missingKey = key == nil && error == .missingCryptKey(id: "s") && Self.metaHoldsIV(damagedMeta)
                if events.all.isEmpty && damage != .missingMeta && damage != .missingData && !missingKey {
                    failures.append("\(label): refused without telling the handler: \(error)")
                }
            }
            if !events.all.isEmpty { told += 1 }
            if let store {
                let loaded = try contents(of: store)
                store.close()
                if loaded != original && events.all.isEmpty && !hitsUncoveredField {
                    failures.append("\(label): loaded a different state without telling the handler")
                }
                if !hitsUncoveredField {
                    for (name, value) in loaded where !(history[name]?.contains(value) ?? false) {
                        failures.append("\(label): '\(name)' holds a value it never held")
                    }
                }
                if decision == .discard && !events.all.isEmpty && !loaded.isEmpty {
                    failures.append("\(label): discard kept \(loaded.count) keys")
                }
                if !events.all.isEmpty && !readOnly {
                    recovered += 1
                    try Self.checkQuarantineAndReopen(
                        replay.path, key: key, data: damagedData, meta: damagedMeta,
                        loaded: loaded, label: label, failures: &failures)
                }
            }
            // Sound files may be grown to whole pages by a read-write open; damaged ones may change
            // only through a recovery.
            if (decision == .fail && !events.all.isEmpty) || readOnly || store == nil {
                if fileBytes(replay.file("s")) != damagedData || fileBytes(replay.file("s.crc")) != damagedMeta {
                    failures.append("\(label): the files changed")
                }
            }
            try Self.clear(replay.path)
            if failures.count > 10 { break }
        }
        #expect(failures.isEmpty, "\(failures.count) failures: \(failures.prefix(10))")
        #expect(told > Self.casesPerMode / 4, "the handler was told of only \(told) cases")
        #expect(recovered > 0)
        CrashSimulationTally.shared.add("random damage cases", Self.casesPerMode)
        CrashSimulationTally.shared.add("random damage cases hitting unchecked meta fields", uncovered)
    }

    /// After a read-write recovery: the copies hold the damaged bytes, and the store reopens with
    /// the recovered contents and no new report.
    static func checkQuarantineAndReopen(
        _ directory: String, key: CryptKey?, data: [UInt8]?, meta: [UInt8]?, loaded: [String: [UInt8]],
        label: String, failures: inout [String]
    ) throws {
        let names = try FileManager.default.contentsOfDirectory(atPath: directory)
        guard let copy = names.first(where: { $0.hasPrefix("s.corrupt-") && !$0.hasSuffix(".crc") }) else {
            failures.append("\(label): no copy of the damaged files")
            return
        }
        if fileBytes("\(directory)/\(copy)") != data || fileBytes("\(directory)/\(copy).crc") != meta {
            failures.append("\(label): the copy differs from the damaged files")
        }
        let again = EventLog()
        let reopened = try MappedKV(
            id: "s", directory: directory,
            configuration: Configuration(
                cryptKey: key,
                recoveryHandler: {
                    again.append($0)
                    return .fail
                }))
        if try contents(of: reopened) != loaded || !again.all.isEmpty {
            failures.append("\(label): the recovered store does not reopen as recovered: \(again.all)")
        }
        reopened.close()
    }

    static func apply(
        _ damage: Damage, data: inout [UInt8]?, meta: inout [UInt8]?, encrypted: Bool,
        uncovered: inout Bool, _ random: inout SplitMix64
    ) {
        func index(_ count: Int) -> Int { Int(random.next() % UInt64(max(count, 1))) }
        switch damage {
        case .dataBitFlips:
            guard var bytes = data, !bytes.isEmpty else { return }
            // Mostly inside the used region, where flips matter.
            let used = min(bytes.count, 8192)
            for _ in 0...index(8) {
                bytes[index(random.next() % 4 == 0 ? bytes.count : used)] ^= UInt8(1) << UInt8(index(8))
            }
            data = bytes
        case .metaBitFlips:
            guard var bytes = meta else { return }
            for _ in 0...index(4) {
                let offset = index(MetaInfo.size)
                let bit = index(8)
                bytes[offset] ^= UInt8(1) << UInt8(bit)
                uncovered = uncovered || isUncovered(offset: offset, bit: bit, encrypted: encrypted)
            }
            meta = bytes
        case .truncatedData:
            data = data.map { Array($0.prefix(index($0.count))) }
        case .extendedData:
            let extra = index(8192) + 1
            data = data.map {
                $0
                    + (random.next() % 2 == 0
                        ? [UInt8](repeating: 0, count: extra)
                        : (0..<extra).map { _ in UInt8(truncatingIfNeeded: random.next()) })
            }
        case .zeroedPage:
            guard var bytes = data, !bytes.isEmpty else { return }
            let start = index(bytes.count) / 4096 * 4096
            bytes.replaceSubrange(
                start..<min(start + 4096, bytes.count),
                with: [UInt8](repeating: 0, count: min(4096, bytes.count - start)))
            data = bytes
        case .garbageRange:
            guard var bytes = data, bytes.count > 8 else { return }
            let start = 4 + index(min(bytes.count - 4, 4096))
            let length = min(index(64) + 1, bytes.count - start)
            for offset in start..<(start + length) { bytes[offset] = UInt8(truncatingIfNeeded: random.next()) }
            data = bytes
        case .garbageMeta:
            guard var bytes = meta else { return }
            for offset in 0..<MetaInfo.size { bytes[offset] = UInt8(truncatingIfNeeded: random.next()) }
            meta = bytes
            // Garbage over the whole struct replaces an encrypted store's IV, which no checksum
            // covers: the durability checkpoints after the struct may still vouch for the region,
            // and a garbage IV garbles its first block undetectably when the result happens to
            // decode (a chance that depends on the recording's random IV and holder).
            if encrypted { uncovered = true }
        case .shortMeta:
            meta = meta.map { Array($0.prefix(index(MetaInfo.size))) }
        case .absurdSizes:
            guard var bytes = meta else { return }
            let field = random.next() % 2 == 0 ? MetaInfo.Offset.actualSize : MetaInfo.Offset.lastConfirmedActualSize
            let value: UInt32 =
                random.next() % 2 == 0 ? UInt32.max - UInt32(index(8)) : UInt32(truncatingIfNeeded: random.next())
            withUnsafeBytes(of: value.littleEndian) { bytes.replaceSubrange(field..<(field + 4), with: $0) }
            meta = bytes
        case .missingMeta: meta = nil
        case .missingData: data = nil
        }
    }

    /// Meta fields that MMKV's format leaves outside every checksum and that change how the
    /// region is read: the version, the IV of an encrypted store, and the key-expiry flag. Damage
    /// there can change values undetectably (MMKV has the same blind spot); those cases are only
    /// held to "no crash, no hang, a consistent store".
    static func isUncovered(offset: Int, bit: Int, encrypted: Bool) -> Bool {
        (MetaInfo.Offset.version..<(MetaInfo.Offset.version + 4)).contains(offset)
            || (encrypted && (MetaInfo.Offset.iv..<(MetaInfo.Offset.iv + 16)).contains(offset))
            || (offset == MetaInfo.Offset.flags && bit == 0)
    }

    /// Whether a load reads an IV from `meta` (missing bytes read as zeros).
    static func metaHoldsIV(_ meta: [UInt8]?) -> Bool {
        (meta ?? []).withUnsafeBytes { MissingCryptKey.metaHoldsIV(LoadAssessment.parseMeta($0).normalized) }
    }

    static func materialize(data: [UInt8]?, meta: [UInt8]?, in directory: String) throws {
        if let data { try writeFile("\(directory)/s", data) }
        if let meta { try writeFile("\(directory)/s.crc", meta) }
    }

    static func clear(_ directory: String) throws {
        for name in try FileManager.default.contentsOfDirectory(atPath: directory) {
            try FileManager.default.removeItem(atPath: "\(directory)/\(name)")
        }
    }
}
