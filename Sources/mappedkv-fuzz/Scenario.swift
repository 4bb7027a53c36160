import Glibc
import MappedKV
import MappedKVCrypto
import MappedKVFormat

/// What one input does to the store, and the invariants it checks on the way:
///
/// 1. write the files into the scratch directory and inspect the bytes the load will assess
///    (`StoreInspector.inspect(location:dataFile:metaFile:cryptKey:)`): with a journal that is
///    due a redo (``JournalReplay``), the files the redo leaves; a read-only open must then
///    refuse with `interruptedWriteBack` and change nothing;
/// 2. open the store with a handler that answers as the flags say; errors thrown by the open are
///    expected for garbage, but then the files must be exactly as written (or as the load left
///    them after the journal), with nothing beside them, and a handler answer other than `.fail`
///    must not end in an error;
/// 3. if it opens: a damage event agrees with the inspector and the recovery report, a read-write
///    `.recover`/`.discard` left byte-exact copies of both files aside and a read-only one none,
///    and every key of `allKeys` has a payload;
/// 4. read-only: close, the files are untouched; read-write: one set and one remove, read back,
///    close, then reopen, which must load without calling the handler again and hold exactly
///    the same keys and payloads, and the inspector must now find the files sound.
///
/// A broken invariant is a ``finding(_:_:file:line:)``.
struct Scenario {
    static let storeID = "s"
    static let setKey = "fuzz.set"
    /// A fixed clock, so key expiry decides the same way in both opens.
    static let clock = ExpiryClock { 1_700_000_000 }
    /// With `MAPPEDKV_FUZZ_TRACE` set, each input prints what happened (for triage, e.g. with `-runs=0`).
    static let tracing = getenv("MAPPEDKV_FUZZ_TRACE") != nil

    let image: StoreImage
    let scratch: ScratchDirectory
    /// The value of the one set (taken from the input, so its length varies).
    let setValue: [UInt8]

    var flags: FuzzFlags { image.flags }
    private var cryptKey: CryptKey? { flags.key.cryptKey }
    private var dataName: String { Self.storeID }
    private var metaName: String { Self.storeID + ".crc" }
    var journalName: String { Self.storeID + ".writeback" }

    /// Keys and payloads by key bytes (Swift's `String` equality would merge canonically
    /// equivalent keys that the store keeps apart).
    typealias Contents = [[UInt8]: [UInt8]]

    func run() {
        scratch.clear()
        defer { scratch.clear() }
        if let meta = image.metaFile { PlainFiles.write(meta, to: scratch.file(metaName)) }
        if let data = image.dataFile { PlainFiles.write(data, to: scratch.file(dataName)) }
        if let journal = image.journalFile { PlainFiles.write(journal, to: scratch.file(journalName)) }
        let written = Files(data: image.dataFile, meta: image.metaFile, journal: image.journalFile)
        guard let loaded = filesAfterJournal(written) else { return }
        let location: StoreLocation
        do { location = try StoreLocation(id: Self.storeID, directory: scratch.path) } catch {
            harnessFailure("store location: \(error)")
        }
        let inspection: InspectionReport
        do {
            inspection = try StoreInspector.inspect(
                location: location, dataFile: loaded.data, metaFile: loaded.meta, cryptKey: cryptKey)
        } catch {
            // Thrown only when libcrypto fails, which says nothing about the files.
            harnessFailure("inspecting the bytes: \(error)")
        }

        let log = HandlerLog { [decision = flags.decision] event in decision.decide(event) }
        let store: MappedKV
        do {
            store = try MappedKV(id: Self.storeID, directory: scratch.path, configuration: configuration(log.handler))
        } catch {
            trace("open threw: \(error); handler calls: \(log.calls.map { "\($0.event) -> .\($0.decision)" })")
            checkVerdict(inspection, calls: log.calls)
            checkFailedOpen(error, calls: log.calls, written: written, loaded: loaded)
            return
        }
        let calls = log.calls
        trace(
            "opened; inspector: \(inspection.verdict); handler calls: \(calls.map { "\($0.event) -> .\($0.decision)" }); copies: \(quarantineCopies())"
        )
        checkVerdict(inspection, calls: calls)
        checkOpened(store, calls: calls, inspection: inspection, loaded: loaded)
        let contents = readEverything(store, context: "after the first open")
        if flags.isReadOnly {
            store.close()
            checkUntouched(loaded, "after a read-only session")
            return
        }
        let expected = writeOnce(store, contents: contents)
        store.close()
        reopen(expecting: expected, firstCalls: calls)
        trace("read-write session and reopen passed with \(expected.count) keys")
    }

    func trace(_ text: @autoclosure () -> String) {
        if Self.tracing { printToStandardError("[\(flags)] " + text()) }
    }

    func configuration(_ handler: @escaping RecoveryHandler) -> Configuration {
        Configuration(
            isReadOnly: flags.isReadOnly, isMultiProcess: flags.isMultiProcess, cryptKey: cryptKey,
            clock: Self.clock, recoveryHandler: handler)
    }

    // MARK: First open

    /// With both files present, the inspector predicts the load: damage exactly when the handler
    /// was called, with the same kind, reason and proposal.
    private func checkVerdict(_ inspection: InspectionReport, calls: [HandlerLog.Call]) {
        guard image.dataFile != nil, image.metaFile != nil else { return }
        let verdict = inspection.verdict
        switch (verdict, calls.first) {
        case (.damaged(let predicted), let call?):
            let event = call.event
            if predicted.kind != event.kind || predicted.reason != event.reason || predicted.proposal != event.proposal
            {
                finding("the inspector predicts '\(predicted)', the load reported '\(event)'", image)
            }
        case (.damaged(let predicted), nil):
            finding("the inspector predicts '\(predicted)', but the load did not call the handler", image)
        case (_, let call?):
            finding("the inspector predicts '\(verdict)', but the load reported '\(call.event)'", image)
        case (_, nil):
            break
        }
    }

    /// The files are as written if the open threw before it dealt with the journal (which is
    /// then still there), else as the load found them after it.
    private func checkFailedOpen(_ error: MappedKVError, calls: [HandlerLog.Call], written: Files, loaded: Files) {
        if calls.count > 1 { finding("the handler was called \(calls.count) times in one load", image) }
        if let call = calls.first, call.decision != .fail {
            finding("the handler answered .\(call.decision) to '\(call.event)', but the open threw: \(error)", image)
        }
        if Self.isInterruptedWriteBack(error) {
            finding("the open threw interruptedWriteBack, but no journal is due a redo", image)
        }
        let journalKept = written.journal != nil && PlainFiles.read(scratch.file(journalName)) != nil
        checkUntouched(
            journalKept ? written : loaded,
            calls.isEmpty ? "after an open that threw (\(error))" : "after the handler answered .fail (\(error))")
    }

    private func checkOpened(_ store: MappedKV, calls: [HandlerLog.Call], inspection: InspectionReport, loaded: Files) {
        if !flags.isReadOnly, let journal = PlainFiles.read(scratch.file(journalName)) {
            finding("a read-write load left the journal (\(journal.count) bytes)", image)
        }
        let copies = quarantineCopies()
        guard let call = calls.first else {
            if !copies.isEmpty { finding("no damage was reported, but copies were made: \(copies)", image) }
            if let report = store.recoveryReport { finding("no handler call, but a recovery report: \(report)", image) }
            return
        }
        let event = call.event
        if calls.count > 1 { finding("the handler was called \(calls.count) times in one load", image) }
        if call.decision == .fail {
            finding("the open succeeded although the handler answered .fail to '\(event)'", image)
        }
        if event.isReadOnly != flags.isReadOnly {
            finding("event.isReadOnly is \(event.isReadOnly) for this open", image)
        }
        if event.storeID != Self.storeID { finding("event.storeID is '\(event.storeID)'", image) }
        if inspection.isSound {
            finding("the inspector finds the files sound, but the load reported '\(event)'", image)
        }
        guard let report = store.recoveryReport else {
            finding("the handler was called, but there is no recovery report", image)
        }
        if report.event != event || report.decision != call.decision {
            finding("the recovery report (\(report)) is not the handler's event and answer", image)
        }
        if flags.isReadOnly {
            if !copies.isEmpty || !report.quarantinedFiles.isEmpty {
                finding(
                    "a read-only .\(call.decision) made copies: \(copies), report \(report.quarantinedFiles)", image)
            }
        } else {
            checkQuarantine(copies, report: report, decision: call.decision, loaded: loaded)
        }
        let count: Int
        do { count = try store.count } catch { finding("count threw after a recovery: \(error)", image) }
        if call.decision == .discard && count != 0 { finding("after .discard the store holds \(count) keys", image) }
        if call.decision == .recover, !store.isKeyExpiryEnabled, count != event.proposal.keptKeys {
            finding("after .recover the store holds \(count) keys, the proposal said \(event.proposal.keptKeys)", image)
        }
    }

    /// A read-write `.recover` or `.discard` must have copied both files aside, byte for byte, as
    /// the load found them.
    private func checkQuarantine(
        _ copies: [String], report: RecoveryReport, decision: RecoveryDecision, loaded: Files
    ) {
        guard copies.count == 2, let dataCopy = copies.first, copies.last == dataCopy + ".crc" else {
            finding("after a read-write .\(decision) the copies are \(copies), not one data file and its .crc", image)
        }
        let paths = [scratch.file(dataCopy), scratch.file(dataCopy + ".crc")]
        if report.quarantinedFiles != paths {
            finding("the recovery report lists copies \(report.quarantinedFiles), the directory holds \(paths)", image)
        }
        if PlainFiles.read(paths[0]) != (loaded.data ?? []) {
            finding("the copy of the data file differs from the damaged file", image)
        }
        if PlainFiles.read(paths[1]) != (loaded.meta ?? []) {
            finding("the copy of the meta file differs from the damaged file", image)
        }
    }

    private func quarantineCopies() -> [String] {
        scratch.names.filter { $0.hasPrefix(Self.storeID + ".corrupt-") }
    }

    /// The files exactly as `expected` (a read-write open may have created a missing data or meta
    /// file, empty) and nothing else in the directory.
    func checkUntouched(_ expected: Files, _ context: String) {
        let files = [(dataName, expected.data), (metaName, expected.meta), (journalName, expected.journal)]
        for (name, original) in files {
            let now = PlainFiles.read(scratch.file(name))
            if let original {
                guard let now else { finding("\(name) was deleted \(context)", image) }
                if now != original { finding("\(name) changed \(context): \(Self.difference(original, now))", image) }
            } else if let now, name == journalName || flags.isReadOnly || !now.isEmpty {
                finding("\(name) should not exist \(context), but holds \(now.count) bytes", image)
            }
        }
        let others = scratch.names.filter { $0 != dataName && $0 != metaName && $0 != journalName }
        if !others.isEmpty { finding("files appeared \(context): \(others)", image) }
    }

    // MARK: Reads and writes

    /// Every key with its payload; each key of `allKeys` must have one, and `count` and
    /// `entries()` must agree.
    private func readEverything(_ store: MappedKV, context: String) -> Contents {
        let keys: [String]
        do { keys = try store.allKeys } catch { finding("allKeys threw \(context): \(error)", image) }
        var contents: Contents = [:]
        for key in keys {
            let payload: [UInt8]?
            do { payload = try store.payload(forKey: key) } catch {
                finding("payload(forKey:) threw \(context): \(error)", image)
            }
            guard let payload else {
                finding("allKeys lists \(Self.show(key)) but payload(forKey:) is nil \(context)", image)
            }
            if contents.updateValue(payload, forKey: Array(key.utf8)) != nil {
                finding("allKeys lists \(Self.show(key)) twice \(context)", image)
            }
            decodeEveryType(store, key)
        }
        let entries: [(key: String, payload: [UInt8])]
        let count: Int
        do {
            entries = try store.entries()
            count = try store.count
            _ = try store.info()
        } catch { finding("entries/count/info threw \(context): \(error)", image) }
        if count != contents.count {
            finding("count is \(count), allKeys has \(contents.count) keys \(context)", image)
        }
        let entryContents = Contents(
            entries.map { (Array($0.key.utf8), $0.payload) }, uniquingKeysWith: { first, _ in first })
        if entryContents != contents || entries.count != contents.count {
            finding(
                "entries() (\(entries.count)) disagrees with allKeys and payload(forKey:) (\(contents.count)) \(context)",
                image)
        }
        return contents
    }

    /// Decodes the value as every type: a decoding error is fine, a crash is not.
    private func decodeEveryType(_ store: MappedKV, _ key: String) {
        func decode<V: PayloadCodable & Sendable>(_ type: V.Type) { _ = try? store.value(forKey: key, as: type) }
        decode(Bool.self)
        decode(Int32.self)
        decode(UInt32.self)
        decode(Int64.self)
        decode(UInt64.self)
        decode(Int.self)
        decode(Float.self)
        decode(Double.self)
        decode(String.self)
        decode([UInt8].self)
        decode([String].self)
        _ = try? store.valueSize(forKey: key)
        _ = try? store.contains(key)
    }

    /// One set and one remove (of the first other key, or of the set key if there is none);
    /// returns what the store must hold afterwards.
    private func writeOnce(_ store: MappedKV, contents: Contents) -> Contents {
        do { try store.set(setValue, forKey: Self.setKey) } catch {
            finding("set threw on a read-write store: \(error)", image)
        }
        let readBack: [UInt8]?
        do { readBack = try store.value(forKey: Self.setKey, as: [UInt8].self) } catch {
            finding("reading the set value threw: \(error)", image)
        }
        if readBack != setValue { finding("the set value reads back as \(readBack.map(Self.hex) ?? "nil")", image) }

        let setKeyBytes = Array(Self.setKey.utf8)
        let target =
            contents.keys
            .filter { $0 != setKeyBytes && $0.count <= RecordLimits.maximumKeyLength }
            .min { $0.lexicographicallyPrecedes($1) }
            .map { String(decoding: $0, as: UTF8.self) } ?? Self.setKey
        do { try store.removeValue(forKey: target) } catch {
            finding("removing \(Self.show(target)) threw: \(error)", image)
        }
        let stillThere: Bool
        do { stillThere = try store.contains(target) } catch {
            finding("contains threw after a remove: \(error)", image)
        }
        if stillThere { finding("\(Self.show(target)) is still there after its removal", image) }

        var expected = contents
        expected[setKeyBytes] = setValue.payloadBytes
        expected[Array(target.utf8)] = nil
        let actual = readEverything(store, context: "after one set and one remove")
        if actual != expected {
            finding("after one set and one remove: \(Self.difference(expected: expected, actual: actual))", image)
        }
        return expected
    }

    // MARK: Reopen

    /// A store closed after a read-write session must load cleanly, with the same contents.
    private func reopen(expecting expected: Contents, firstCalls: [HandlerLog.Call]) {
        let first =
            firstCalls.first.map { "after the first open answered .\($0.decision) to '\($0.event)'" }
            ?? "after a first open that found no damage"
        let log = HandlerLog { _ in .fail }
        let store: MappedKV
        do {
            store = try MappedKV(id: Self.storeID, directory: scratch.path, configuration: configuration(log.handler))
        } catch {
            if let call = log.calls.first {
                finding("the handler was called again on the reopen \(first): '\(call.event)'", image)
            }
            finding("the reopen \(first) threw: \(error)", image)
        }
        defer { store.close() }
        if let call = log.calls.first {
            finding("the handler was called again on the reopen \(first): '\(call.event)'", image)
        }
        if let report = store.recoveryReport { finding("the reopen \(first) has a recovery report: \(report)", image) }
        let actual = readEverything(store, context: "after the reopen")
        if actual != expected {
            finding(
                "the reopen \(first) holds other data: \(Self.difference(expected: expected, actual: actual))", image)
        }
        store.close()

        let report: InspectionReport
        do { report = try StoreInspector.inspect(id: Self.storeID, directory: scratch.path, cryptKey: cryptKey) } catch
        {
            finding("inspecting the files after the reopen threw: \(error)", image)
        }
        if let problem = report.problem {
            finding("the inspector finds the files unsound after a clean session \(first): \(problem)", image)
        }
        if report.journalPresent { finding("a journal is left after a clean session \(first)", image) }
    }

    // MARK: Messages

    static func hex(_ bytes: [UInt8]) -> String {
        let digits = Array("0123456789abcdef")
        return String(bytes.prefix(64).flatMap { [digits[Int($0 >> 4)], digits[Int($0 & 15)]] })
            + (bytes.count > 64 ? "…" : "")
    }

    static func show(_ key: String) -> String { "key \(hex(Array(key.utf8)))" }

    static func difference(_ before: [UInt8], _ after: [UInt8]) -> String {
        let offset =
            (0..<min(before.count, after.count)).first { before[$0] != after[$0] } ?? min(before.count, after.count)
        return "\(before.count) bytes before, \(after.count) after, first difference at offset \(offset)"
    }

    static func difference(expected: Contents, actual: Contents) -> String {
        let missing = expected.keys.filter { actual[$0] == nil }.map(hex)
        let extra = actual.keys.filter { expected[$0] == nil }.map(hex)
        let changed = expected.keys.filter { actual[$0] != nil && actual[$0] != expected[$0] }.map(hex)
        return "missing keys \(missing), unexpected keys \(extra), changed payloads \(changed)"
    }
}
