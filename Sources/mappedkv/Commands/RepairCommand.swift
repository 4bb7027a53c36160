import ArgumentParser
import Foundation
import MappedKV
import Synchronization

/// `mappedkv repair`: recovers a damaged store, keeping a copy of the damaged files.
struct RepairCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "repair",
        abstract: "Recover a damaged store to its longest verified state, keeping a copy of the damaged files.",
        discussion: """
            Prints what was found, what was kept and dropped, and where the damaged files were \
            copied (<id>.corrupt-<UTC time> and its .crc, which `verify` and `dump` can read as \
            store <id>.corrupt-<UTC time>). A store that is sound is left alone. Damage that \
            points to a wrong key or a lost meta file is refused unless --force is given, since \
            the data is probably intact. Without a key, a store whose meta file holds an IV (MMKV \
            writes one for an encrypted store) and whose records do not load is refused with exit \
            status 7 and left untouched unless --plain says that it is plain: a repair would \
            otherwise keep ciphertext as plain keys. \(ExitStatus.helpText)
            """)

    @OptionGroup var store: StoreOptions

    @Flag(name: .long, help: "Start the store empty instead of keeping the verified records.")
    var discard = false

    @Flag(name: .long, help: "Recover even when the damage suggests a wrong key or a lost meta file.")
    var force = false

    @Flag(
        name: .long,
        help:
            "Without a key: the store is plain, although its meta file holds an IV (a stale one, left by decrypting it)."
    )
    var plain = false

    func validate() throws {
        if plain && [store.key.cryptKey, store.key.cryptKeyFile, store.key.cryptKeyEnv].contains(where: { $0 != nil }) {
            throw ValidationError("--plain is for a store opened without a key")
        }
    }

    func run() throws {
        let before = try reportingErrors {
            try StoreInspector.inspect(id: store.id, directory: store.root, cryptKey: store.resolvedKey())
        }
        if plain, case .missingCryptKey(let event) = before.verdict {
            print("before: damaged: \(event.reason) (read as plain, as --plain says)")
        } else {
            print("before: \(VerificationText.status(before))")
        }
        if before.isSound && !before.journalPresent {
            print("nothing to repair")
            return
        }
        let decision: RecoveryDecision = discard ? .discard : .recover
        let force = self.force
        let refused = Mutex<DamageEvent?>(nil)
        let handler: RecoveryHandler = { event in
            if !force && (event.kind == .wrongKeySuspected || event.kind == .metaMissing) {
                refused.withLock { $0 = event }
                return .fail
            }
            return decision
        }
        let opened: MappedKV
        do {
            opened = try store.open(readOnly: false, treatsStoreAsPlain: plain, recoveryHandler: handler)
        } catch let error as MappedKVError {
            if let event = refused.withLock({ $0 }) {
                throw fail(
                    event.kind == .wrongKeySuspected ? .wrongKey : .damaged,
                    "refusing to repair: \(event.kind): \(event.reason); check the key and the .crc file, or pass --force"
                )
            }
            throw fail(ExitStatus(error), error.description)
        }
        defer { opened.close() }
        if let report = opened.recoveryReport {
            let proposal = report.event.proposal
            print("decision: \(report.decision)")
            if report.decision == .recover {
                print(
                    "kept: \(proposal.keptKeys) keys (\(proposal.keptRecords) records, \(proposal.keptBytes) bytes; \(proposal.basis))"
                )
                let uncommitted = proposal.basis == .currentCRC ? " never committed (past the meta's CRC)" : ""
                print(
                    "dropped: \(proposal.droppedBytes) bytes holding \(proposal.droppedRecords) records\(uncommitted)")
                if !proposal.droppedKeys.isEmpty {
                    let shown = proposal.droppedKeys.prefix(20).joined(separator: ", ")
                    print(
                        "keys that lost values: \(shown)\(proposal.droppedKeys.count > 20 ? ", ... (\(proposal.droppedKeys.count) in all)" : "")"
                    )
                }
            } else {
                print("kept: nothing (discarded)")
            }
            for path in report.quarantinedFiles { print("damaged copy: \(path)") }
        } else if let loss = opened.crashLossReport {
            print(
                "writes lost to a crash: \(loss.lostWrites) or more (\(loss.lostBytes) bytes), all after the last durability point"
            )
            print("kept: \(loss.keptKeys) keys (\(loss.keptBytes) bytes); nothing copied aside")
        } else {
            print("repaired without loss")
        }
        let after = try reportingErrors {
            try StoreInspector.inspect(id: store.id, directory: store.root, cryptKey: store.resolvedKey())
        }
        print("after: \(VerificationText.status(after)), \(after.liveKeyCount) keys")
        if !after.isSound { throw InspectionSummary.exitStatus(after).exitCode }
    }
}
