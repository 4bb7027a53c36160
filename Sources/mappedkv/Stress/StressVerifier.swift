import MappedKV

/// The final check of a stress run: the store, opened in multi-process mode after every child
/// has ended, must agree with the children's journals.
///
/// - Every journal is well formed, has no `V` line and ends with `D`.
/// - The counter `C`: acknowledged increments wrote distinct values, none above `C`, and every
///   value in `1...C` was written by an acknowledged or an in-flight increment (so with no kills,
///   `C` is exactly the number of acknowledged increments).
/// - Every key a child wrote holds its last acknowledged value (absent after a removal), or the
///   value of an operation still in flight on it; the store has no other keys.
struct StressVerifier {
    /// The run's root directory.
    var root: String
    /// The store's ID.
    var id: String
    /// The store's key, or nil for a plain store.
    var cryptKey: CryptKey?
    /// The store's inter-process lock.
    var processLock: ProcessLock = .flock

    /// At most this many missing counter values are listed in a violation.
    private static let listedCounterValues = 10

    /// The violations found, in journal, counter, key order.
    func verify(_ histories: [StressHistory]) -> [String] {
        var violations = Self.journalViolations(histories)
        let store: MappedKV
        do {
            store = try MappedKV(
                id: id, directory: root,
                configuration: Configuration(
                    isMultiProcess: true, cryptKey: cryptKey, processLock: processLock))
        } catch {
            return violations + ["verification could not open the store: \(error)"]
        }
        defer { store.close() }
        do {
            violations += try verifyCounter(histories, in: store)
            violations += try verifyKeys(histories, in: store)
        } catch {
            violations.append("verification failed to read the store: \(error)")
        }
        return violations
    }

    /// The violations the journals hold or are: `V` lines, broken rules, no final `D`.
    static func journalViolations(_ histories: [StressHistory]) -> [String] {
        var violations: [String] = []
        for history in histories {
            violations += history.violations.map { "journal of child \(history.child): \($0)" }
            if !history.isDone {
                violations.append("journal of child \(history.child) does not end with D: the child did not finish")
            }
        }
        return violations
    }

    /// The counter's violations.
    private func verifyCounter(_ histories: [StressHistory], in store: MappedKV) throws(MappedKVError) -> [String] {
        var violations: [String] = []
        let counter = try store.int64(forKey: StressKey.counter) ?? 0
        var writers: [Int64: String] = [:]
        for history in histories {
            for increment in history.acknowledgedIncrements {
                let writer = "child \(history.child) operation \(increment.opno)"
                if let earlier = writers[increment.newValue] {
                    violations.append(
                        "counter value \(increment.newValue) was acknowledged twice: by \(earlier) and by \(writer) (lost update)"
                    )
                }
                writers[increment.newValue] = writer
                if increment.newValue > counter {
                    violations.append(
                        "\(writer) acknowledged an increment to \(increment.newValue), but the counter is \(counter)")
                }
            }
        }
        var possible = Set(writers.keys)
        for history in histories {
            possible.formUnion(history.inFlightIncrements.map(\.newValue))
            if let pending = history.pending, case .increment(let newValue) = pending.intent {
                possible.insert(newValue)
            }
        }
        guard counter >= 0, counter <= Int64(possible.count) else {
            return violations + [
                "the counter is \(counter), but only \(writers.count) increments were acknowledged and \(possible.count - writers.count) more were in flight"
            ]
        }
        let missing = counter > 0 ? (1...counter).filter { !possible.contains($0) } : []
        if !missing.isEmpty {
            let listed = missing.prefix(Self.listedCounterValues).map(String.init).joined(separator: ", ")
            violations.append(
                "the counter is \(counter), but \(missing.count) of its values were never written by an acknowledged or in-flight increment: \(listed)\(missing.count > Self.listedCounterValues ? ", ..." : "")"
            )
        }
        return violations
    }

    /// The violations of the children's keys, and keys no child wrote.
    private func verifyKeys(_ histories: [StressHistory], in store: MappedKV) throws(MappedKVError) -> [String] {
        var violations: [String] = []
        var known: Set<String> = [StressKey.counter]
        for history in histories {
            for name in history.mentionedKeys.sorted() {
                known.insert(name)
                guard let key = StressKey(name: name), key.child == history.child else {
                    violations.append("journal of child \(history.child) writes key '\(name)', which is not its own")
                    continue
                }
                let actual: String?
                do {
                    actual = try StressValue.read(key.kind, forKey: name, from: store)?.token
                } catch {
                    violations.append("key \(name): \(error)")
                    continue
                }
                let expected = history.token(of: name)
                var allowed = [expected]
                if let pending = history.pending, pending.intent.ownKey == name {
                    if case .set(_, let token) = pending.intent { allowed.append(token) } else { allowed.append(nil) }
                }
                if !allowed.contains(actual) {
                    let alternatives = allowed.map { $0 ?? "absent" }.joined(separator: " or the in-flight ")
                    violations.append(
                        "key \(name): the store has \(actual ?? "absent"), the journal of child \(history.child) says \(alternatives)"
                    )
                }
            }
        }
        for name in try store.allKeys where !known.contains(name) {
            violations.append("key \(name) is in the store, but no journal wrote it")
        }
        return violations
    }
}
