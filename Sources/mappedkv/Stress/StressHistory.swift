/// What a child's journal says happened: the state of the child's keys, its share of the counter,
/// and anything wrong with the journal itself.
///
/// A restarted child rebuilds its model from this; the parent verifies the store against it.
struct StressHistory: Sendable {
    /// An increment of the shared counter, by the value it set.
    struct Increment: Sendable {
        /// The counter value the increment wrote.
        var newValue: Int64
        /// The child's operation number.
        var opno: Int
    }

    /// The index of the child.
    let child: Int
    /// The token of each key the child has written, or nil if it removed it: the last value it
    /// acknowledged (or found applied after a kill). Keys never written are missing.
    private(set) var values: [String: String?] = [:]
    /// Every key named in an intent, applied or not.
    private(set) var mentionedKeys: Set<String> = []
    /// The number of acknowledged operations, reads included.
    private(set) var acknowledged = 0
    /// The highest operation number in the journal (0 if none).
    private(set) var lastOpno = 0
    /// The intent not yet followed by its `A`, `X` or `U` line: the operation in flight when the
    /// last incarnation was killed.
    private(set) var pending: (opno: Int, intent: StressIntent)?
    /// The acknowledged counter increments.
    private(set) var acknowledgedIncrements: [Increment] = []
    /// The counter increments whose outcome is unknown (in flight at a kill).
    private(set) var inFlightIncrements: [Increment] = []
    /// The child's `V` lines, and any line that breaks the journal's rules.
    private(set) var violations: [String] = []
    /// How many incarnations of the child started.
    private(set) var incarnations = 0
    /// Whether the journal ends with `D`.
    private(set) var isDone = false

    /// Replays `entries`; `malformed` lines are violations.
    init(child: Int, entries: [StressJournalEntry], malformed: [String] = []) {
        self.child = child
        violations = malformed.map { "journal line '\($0)' is not a journal line" }
        for entry in entries { apply(entry) }
    }

    /// The history of the journal at `path`.
    static func load(child: Int, path: String) throws -> StressHistory {
        let (entries, malformed) = try StressJournal.read(path: path)
        return StressHistory(child: child, entries: entries, malformed: malformed)
    }

    /// The token the child last left in `key`: nil if it never wrote it or removed it.
    func token(of key: String) -> String? { values[key] ?? nil }

    /// Records `entry`, as the writer does after writing it.
    mutating func apply(_ entry: StressJournalEntry) {
        isDone = entry == .done
        switch entry {
        case .start:
            incarnations += 1
        case .intent(let opno, let intent):
            if let pending {
                violations.append("intent for operation \(opno) while operation \(pending.opno) is unresolved")
            }
            pending = (opno, intent)
            lastOpno = max(lastOpno, opno)
            if let key = intent.ownKey { mentionedKeys.insert(key) }
        case .read(let read):
            lastOpno = max(lastOpno, read.opno)
            acknowledged += 1
            if let pending {
                violations.append("get of operation \(read.opno) while operation \(pending.opno) is unresolved")
            }
        case .acknowledged(let opno, _):
            lastOpno = max(lastOpno, opno)
            acknowledged += 1
            guard let pending else { return }  // a read: it has no intent
            guard pending.opno == opno else {
                violations.append("acknowledgement of operation \(opno) while operation \(pending.opno) is unresolved")
                return
            }
            self.pending = nil
            switch pending.intent {
            case .set(let key, let token): values[key] = .some(token)
            case .remove(let key): values[key] = .some(nil)
            case .increment(let newValue): acknowledgedIncrements.append(Increment(newValue: newValue, opno: opno))
            case .trim, .cachePut, .cacheRemove: break
            }
        case .notApplied(let opno), .unresolved(let opno):
            guard let pending, pending.opno == opno else {
                violations.append("resolution of operation \(opno), which is not the one in flight")
                return
            }
            self.pending = nil
            if case .unresolved = entry, case .increment(let newValue) = pending.intent {
                inFlightIncrements.append(Increment(newValue: newValue, opno: opno))
            }
        case .violation(let text):
            violations.append(text)
        case .done:
            break
        }
    }
}
