import Glibc
import MappedKV
import MappedKVIO

/// The end of a child that hit a store error: the error is in its journal as a `V` line.
struct StressChildFailure: Error, CustomStringConvertible {
    /// What failed.
    var message: String
    var description: String { message }
}

/// One incarnation of a stress child: it resumes from its journal, settles the operation a
/// killed predecessor left in flight, then performs operations until the journal holds the
/// requested number of acknowledged ones, journalling each around its store call.
final class StressWorker {
    /// What the child was asked to do.
    struct Settings: Sendable {
        /// The stress run's root directory.
        var root: String
        /// The store's ID.
        var id: String
        /// This child's index.
        var child: Int
        /// How many children the run has (for reads of other children's keys).
        var processes: Int
        /// How many acknowledged operations the child must reach, over all its incarnations.
        var operations: Int
        /// The run's seed.
        var seed: UInt64
        /// How many times this child was restarted before this incarnation.
        var incarnation: Int
        /// The operations to perform.
        var workload: StressWorkload
        /// The store's key, or nil for a plain store.
        var cryptKey: CryptKey?
        /// The store's inter-process lock.
        var processLock: ProcessLock = .flock
    }

    private let settings: Settings
    private let journal: StressJournalWriter
    private var history: StressHistory
    private var random: StressRandom

    /// Opens the child's journal (cutting off a torn last line) and replays it.
    init(settings: Settings) throws {
        self.settings = settings
        let path = StressJournal.path(root: settings.root, child: settings.child)
        journal = try StressJournalWriter(path: path)
        history = try StressHistory.load(child: settings.child, path: path)
        random = StressRandom(seed: settings.seed, child: settings.child, incarnation: settings.incarnation)
    }

    /// Runs the incarnation: waits at the barrier on `barrier` if given, opens the store and works.
    ///
    /// - Throws: ``StressChildFailure`` after a store error (journalled as a violation), or a
    ///   ``SystemError`` if the journal cannot be written.
    func run(barrier: Int32?) throws {
        if let barrier { try StartBarrier.wait(on: barrier) }
        try record(.start(incarnation: settings.incarnation, pid: getpid()))
        let store: MappedKV
        do {
            store = try MappedKV(
                id: settings.id, directory: settings.root,
                configuration: Configuration(
                    isMultiProcess: true, cryptKey: settings.cryptKey,
                    // Kills never need a lossy recovery; one that happens is written to this
                    // child's standard error (kept in --root) for the failure report.
                    recoveryHandler: { event in
                        printError("stress-child \(getpid()): damage: \(event)")
                        return RecoveryDecision.default(for: event)
                    }, processLock: settings.processLock))
        } catch {
            try fail("child \(settings.child): opening the store failed: \(error)")
        }
        defer { store.close() }
        do {
            try resolvePending(in: store)
            while history.acknowledged < settings.operations {
                try perform(StressOperation.choose(for: settings.workload, using: &random), on: store)
            }
        } catch let error as MappedKVError {
            try fail("child \(settings.child), operation \(history.lastOpno): store error: \(error)")
        }
        try record(.done)
    }

    /// Journals `message` as a violation and throws it.
    private func fail(_ message: String) throws -> Never {
        try record(.violation(message))
        throw StressChildFailure(message: message)
    }

    /// Writes `entry` to the journal and applies it to the model.
    private func record(_ entry: StressJournalEntry) throws(SystemError) {
        try journal.append(entry)
        history.apply(entry)
    }

    /// Journals a violation the child saw and carries on.
    private func violation(_ message: String) throws(SystemError) {
        try record(.violation("child \(settings.child): " + message))
    }

    /// The number of the next operation.
    private func nextOpno() -> Int { history.lastOpno + 1 }

    /// A random one of this child's keys.
    private func randomOwnKey() -> StressKey {
        StressKey(child: settings.child, slot: Int.random(in: 0..<StressKey.slotsPerChild, using: &random))
    }

    /// `token`, or `absent`, for messages.
    private static func describe(_ token: String?) -> String { token ?? "absent" }

    /// Settles the operation left in flight by a killed incarnation: a set or removal happened if
    /// the store shows its result, did not if the store shows the previous value, and anything
    /// else is a violation; the outcome of an increment or a trim cannot be told.
    private func resolvePending(in store: MappedKV) throws {
        guard let (opno, intent) = history.pending else { return }
        let intended: String?
        switch intent {
        case .set(_, let token): intended = token
        case .remove: intended = nil
        case .increment, .trim, .cachePut, .cacheRemove: return try record(.unresolved(opno: opno))
        }
        guard let name = intent.ownKey, let key = StressKey(name: name), key.child == settings.child else {
            try violation("operation \(opno) in flight names a key that is not the child's own")
            return try record(.notApplied(opno: opno))
        }
        let actual = try StressValue.read(key.kind, forKey: key.name, from: store)?.token
        let previous = history.token(of: key.name)
        if actual == intended {
            try record(.acknowledged(opno: opno))
        } else {
            if actual != previous {
                try violation(
                    "after a restart, \(key) holds \(Self.describe(actual)), neither its previous value \(Self.describe(previous)) nor the value \(Self.describe(intended)) of the operation \(opno) in flight"
                )
            }
            try record(.notApplied(opno: opno))
        }
    }

    /// Performs and journals one operation.
    private func perform(_ operation: StressOperation, on store: MappedKV) throws {
        let opno = nextOpno()
        switch operation {
        case .set:
            let key = randomOwnKey()
            let value = StressValue.make(for: key, opno: opno, using: &random)
            try record(.intent(opno: opno, .set(key: key.name, token: value.token)))
            try value.store(in: store, forKey: key.name)
        case .getOwn:
            try checkOwnKey(randomOwnKey(), in: store)
        case .readOther:
            guard settings.processes > 1 else {
                try checkOwnKey(randomOwnKey(), in: store)
                break
            }
            var other = Int.random(in: 0..<(settings.processes - 1), using: &random)
            if other >= settings.child { other += 1 }
            let slot =
                8 * Int.random(in: 0..<(StressKey.slotsPerChild / 8), using: &random)
                + Int.random(in: 5...7, using: &random)
            let key = StressKey(child: other, slot: slot)
            if let bytes = try StressValue.read(key.kind, forKey: key.name, from: store)?.selfCheckingBytes,
                let problem = SelfCheckingPayload.problem(in: bytes, expectedKey: key)
            {
                try violation("reading \(key) of child \(other): \(problem)")
            }
        case .remove:
            let key = randomOwnKey()
            try record(.intent(opno: opno, .remove(key: key.name)))
            try store.removeValue(forKey: key.name)
        case .increment:
            try store.withExclusiveLock { transaction in
                let next = try (transaction.int64(forKey: StressKey.counter) ?? 0) + 1
                try record(.intent(opno: opno, .increment(newValue: next)))
                try transaction.set(next, forKey: StressKey.counter)
            }
        case .trim:
            try record(.intent(opno: opno, .trim))
            try store.trim()
        }
        try record(.acknowledged(opno: opno))
    }

    /// Reads `key` and checks it against the model (read-your-writes) and its own checksum.
    private func checkOwnKey(_ key: StressKey, in store: MappedKV) throws {
        let value = try StressValue.read(key.kind, forKey: key.name, from: store)
        let expected = history.token(of: key.name)
        if value?.token != expected {
            try violation(
                "read-your-writes: \(key) holds \(Self.describe(value?.token)), the child last wrote \(Self.describe(expected))"
            )
        }
        if let bytes = value?.selfCheckingBytes, let problem = SelfCheckingPayload.problem(in: bytes, expectedKey: key)
        {
            try violation("reading own \(key): \(problem)")
        }
    }
}
