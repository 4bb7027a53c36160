// Turns: one process at a time at a periodic chore shared by every process of a store (a sweep of
// expired entries), without a lock held across the chore. A turn is a record in the store itself,
// under a key that begins with U+0001 (never offered to a sweep): when its lease ends (the time
// by which the holder must finish or be taken to have died) and when the last turn finished, in
// wall-clock milliseconds, so that every process on the host agrees. The invariants: a turn is
// given under the exclusive section, so two processes never both get it while a lease runs; a
// holder that dies frees the turn when its lease ends; and the record never expires under key
// expiry.

extension MappedKV {
    /// The key of the turn record named `name`.
    static func turnKey(_ name: String) -> String { "\u{1}mappedkv.turn." + name }

    /// Takes the turn named `name` if it is free: nobody holds it with a lease that is still
    /// running and, unless `force` is set, the last turn finished at least `minimumInterval` ago
    /// (a turn never taken is free).
    ///
    /// Every process of a store that tidies it on a timer calls this first and does the work only
    /// when it returns true, then calls ``endTurn(_:)``: one process does the work at a time, and
    /// about once per `minimumInterval` whatever the number of processes.
    ///
    /// ```swift
    /// if try store.beginTurn("tidy", minimumInterval: .seconds(600), lease: .seconds(60)) {
    ///     defer { try? store.endTurn("tidy") }
    ///     var cursor: SweepCursor? = .start
    ///     while let from = cursor {
    ///         cursor = try store.removeExpiredKeysStep(from: from).next
    ///         try await Task.sleep(for: .milliseconds(1))  // waiting processes take the lock
    ///     }
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - name: which turn (a store may have several chores).
    ///   - minimumInterval: the least time between the end of one turn and the start of the next.
    ///   - lease: how long the turn is this process's if it never ends it (it died, say); make it
    ///     longer than the chore takes.
    ///   - force: take the turn however recently the last one finished (at start-up, say), as long
    ///     as nobody holds it.
    /// - Returns: whether this process now holds the turn.
    public func beginTurn(
        _ name: String, minimumInterval: Duration, lease: Duration, force: Bool = false
    ) throws(MappedKVError) -> Bool {
        let key = Self.turnKey(name)
        return try exclusively { _ throws(MappedKVError) -> Bool in
            let now = Self.wallClockMilliseconds(configuration.clock)
            let record = TurnRecord(try string(forKey: key))
            guard record.leaseEnd <= now else { return false }
            // Saturating: a record is bytes in a file, and a lease may be given as long as it likes.
            let sinceLast = now.subtractingReportingOverflow(record.lastFinished)
            let waited = sinceLast.overflow ? (record.lastFinished < 0 ? Int64.max : Int64.min) : sinceLast.partialValue
            let neverTaken = record.lastFinished == 0
            guard force || neverTaken || waited >= Self.milliseconds(minimumInterval) else { return false }
            let end = now.addingReportingOverflow(Self.milliseconds(lease))
            let taken = TurnRecord(leaseEnd: end.overflow ? .max : end.partialValue, lastFinished: record.lastFinished)
            try setTurn(taken, forKey: key)
            return true
        }
    }

    /// Ends the turn named `name` that ``beginTurn(_:minimumInterval:lease:force:)`` gave this
    /// process: the lease ends now, and the turn counts as finished now.
    public func endTurn(_ name: String) throws(MappedKVError) {
        let key = Self.turnKey(name)
        try exclusively { _ throws(MappedKVError) in
            let now = Self.wallClockMilliseconds(configuration.clock)
            try setTurn(TurnRecord(leaseEnd: 0, lastFinished: now), forKey: key)
        }
    }

    /// Writes a turn record, never to expire.
    private func setTurn(_ record: TurnRecord, forKey key: String) throws(MappedKVError) {
        if isKeyExpiryEnabled {
            try set(record.text, forKey: key, expiresAfter: .zero)
        } else {
            try set(record.text, forKey: key)
        }
    }

    /// The clock's time in milliseconds since 1970.
    static func wallClockMilliseconds(_ clock: ExpiryClock) -> Int64 {
        milliseconds(clock.preciseNow())
    }

    /// `duration` in whole milliseconds, clamped to `Int64`'s range and to zero from below.
    static func milliseconds(_ duration: Duration) -> Int64 {
        let (seconds, attoseconds) = duration.components
        guard seconds >= 0 else { return 0 }
        let (whole, overflow) = seconds.multipliedReportingOverflow(by: 1000)
        guard !overflow else { return .max }
        return whole.addingReportingOverflow(attoseconds / 1_000_000_000_000_000).partialValue
    }
}

/// A turn's record: when its lease ends and when the last turn finished, in milliseconds since
/// 1970, stored as the two numbers in decimal separated by a space.
struct TurnRecord {
    /// When the holder's lease ends; 0 when nobody holds the turn.
    var leaseEnd: Int64
    /// When the last turn finished; 0 when none has.
    var lastFinished: Int64

    init(leaseEnd: Int64, lastFinished: Int64) {
        self.leaseEnd = leaseEnd
        self.lastFinished = lastFinished
    }

    /// The record stored as `text`; a missing or unreadable one is a free turn never taken.
    init(_ text: String?) {
        let fields = (text ?? "").split(separator: " ").compactMap { Int64($0) }
        self.init(leaseEnd: fields.count == 2 ? fields[0] : 0, lastFinished: fields.count == 2 ? fields[1] : 0)
    }

    /// The stored form.
    var text: String { "\(leaseEnd) \(lastFinished)" }
}
