/// The history of a `cache` stress run rebuilt from every child's journal: each put and removal of
/// a shared key with the ``StressClock`` times it began and was acknowledged (or none, if it was
/// in flight at a kill), and each get with its times and what it returned. The times of different
/// children are comparable because ``StressClock`` is one clock for the whole system.
///
/// ``staleReads(staleness:)`` checks the gets against the writes (the rule is stated there).
struct CacheStressTimeline: Sendable {
    /// A put or a removal of a shared key.
    struct Write: Sendable {
        /// The key written.
        var key: String
        /// The child, its incarnation and the operation number: for a put, the writer its value names.
        var writer: CacheStressValue.Writer
        /// Whether it was a put (else a removal).
        var isPut: Bool
        /// The time taken before its intent was journalled: it took effect no earlier.
        var begin: UInt64
        /// The time taken right after the call returned: it had taken effect by then. Nil if the
        /// child was killed before (the write may or may not have happened).
        var acknowledged: UInt64?

        /// `put of k3 by child 0 incarnation 1 operation 12 (t+0.100000 s to t+0.101000 s)`.
        func describe(origin: UInt64) -> String {
            let end = acknowledged.map { StressClock.offset($0, from: origin) } ?? "not acknowledged"
            return
                "\(isPut ? "put" : "remove") of \(key) by \(writer) (\(StressClock.offset(begin, from: origin)) to \(end))"
        }
    }

    /// A get, with the child that made it.
    struct Get: Sendable {
        /// The child.
        var child: Int
        /// Its incarnation.
        var incarnation: Int
        /// The journalled get.
        var read: CacheStressRead
    }

    /// The writes, per child in journal order.
    private(set) var writes: [Write] = []
    /// The gets, per child in journal order.
    private(set) var gets: [Get] = []
    /// Journal lines that do not give a write its times.
    private(set) var problems: [String] = []
    /// The earliest time in the journals: messages give times after it.
    private(set) var origin = UInt64.max

    /// The timeline of the children's journals, each given by its child's index and its entries.
    init(journals: [(child: Int, entries: [StressJournalEntry])]) {
        for (child, entries) in journals { add(child: child, entries: entries) }
        if origin == .max { origin = 0 }
    }

    /// Adds the writes and gets of the journal of `child`.
    private mutating func add(child: Int, entries: [StressJournalEntry]) {
        var incarnation = 0
        var pending: Write?
        for entry in entries {
            switch entry {
            case .start(let number, _):
                incarnation = number
            case .intent(let opno, let intent):
                guard let (key, begin, isPut) = Self.write(of: intent) else { continue }
                if let pending { writes.append(pending) }  // the history reports the missing resolution
                let writer = CacheStressValue.Writer(child: child, incarnation: incarnation, sequence: opno)
                pending = Write(key: key, writer: writer, isPut: isPut, begin: begin)
                origin = min(origin, begin)
            case .acknowledged(let opno, let time):
                guard var write = pending, write.writer.sequence == opno else { continue }
                if time == nil {
                    problems.append(
                        "journal of child \(child): the \(write.isPut ? "put" : "remove") of operation \(opno) is acknowledged without a time"
                    )
                }
                write.acknowledged = time
                writes.append(write)
                pending = nil
            case .unresolved(let opno):
                guard let write = pending, write.writer.sequence == opno else { continue }
                writes.append(write)
                pending = nil
            case .notApplied(let opno):
                if pending?.writer.sequence == opno { pending = nil }
            case .read(let read):
                gets.append(Get(child: child, incarnation: incarnation, read: read))
                origin = min(origin, read.begin)
            case .violation, .done:
                continue
            }
        }
        if let pending { writes.append(pending) }
    }

    /// The key, begin time and kind (put or not) of a cache write's intent; nil for other intents.
    private static func write(of intent: StressIntent) -> (key: String, begin: UInt64, isPut: Bool)? {
        switch intent {
        case .cachePut(let key, let begin): (key, begin, true)
        case .cacheRemove(let key, let begin): (key, begin, false)
        case .set, .remove, .increment, .trim: nil
        }
    }
}
