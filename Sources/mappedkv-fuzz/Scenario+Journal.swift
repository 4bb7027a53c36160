import MappedKV

// The write-back journal's part of a scenario: which files the load goes on from, and the
// read-only refusal of a journal that is due a redo.
extension Scenario {
    /// What the store's files hold (nil: the file does not exist).
    struct Files {
        var data: [UInt8]?
        var meta: [UInt8]?
        var journal: [UInt8]?
    }

    /// The files the load assesses once it has dealt with the journal (``JournalReplay``); nil
    /// when the scenario ends with the journal.
    func filesAfterJournal(_ written: Files) -> Files? {
        switch JournalReplay.action(journalFile: written.journal, metaFile: written.meta) {
        case .none:
            return written
        case .ignore:
            return flags.isReadOnly ? written : Files(data: written.data, meta: written.meta)
        case .redo(let journal):
            if flags.isReadOnly {
                checkReadOnlyRedo(written)
                return nil
            }
            guard let redone = JournalReplay.redone(journal, dataFile: written.data, metaFile: written.meta) else {
                openUnchecked("the journal's region does not fit in its file size")
                return nil
            }
            trace("the journal is due a redo")
            return Files(data: redone.data, meta: redone.meta)
        }
    }

    /// A read-only open that meets a journal due a redo must refuse with `interruptedWriteBack`
    /// (unless a file is missing, which it refuses first) and change nothing.
    func checkReadOnlyRedo(_ written: Files) {
        let log = HandlerLog { [decision = flags.decision] event in decision.decide(event) }
        let bothFiles = written.data != nil && written.meta != nil
        do {
            let store = try MappedKV(
                id: Self.storeID, directory: scratch.path, configuration: configuration(log.handler))
            store.close()
            if bothFiles { finding("a read-only open loaded past a journal that is due a redo", image) }
        } catch {
            trace("read-only open with a journal due a redo threw: \(error)")
            if bothFiles && !Self.isInterruptedWriteBack(error) {
                finding("a read-only open with a journal due a redo threw \(error), not interruptedWriteBack", image)
            }
        }
        if let call = log.calls.first {
            finding("the handler was called past a journal due a redo: \(call.event)", image)
        }
        checkUntouched(written, "after a read-only open met a journal due a redo")
    }

    /// Opens and closes the store, checking nothing: what a load should make of the files is not
    /// known, and only a crash is a finding.
    func openUnchecked(_ why: String) {
        trace("not checked: \(why)")
        let configuration = configuration { [decision = flags.decision] event in decision.decide(event) }
        (try? MappedKV(id: Self.storeID, directory: scratch.path, configuration: configuration))?.close()
    }

    /// Whether `error` is the refusal of a read-only open to go past an unfinished write-back.
    static func isInterruptedWriteBack(_ error: MappedKVError) -> Bool {
        if case .corrupted(_, .interruptedWriteBack) = error { return true }
        return false
    }
}
