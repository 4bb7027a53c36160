import ArgumentParser

/// The operations a stress child performs.
enum StressWorkload: String, CaseIterable, ExpressibleByArgument, Sendable {
    /// Sets, reads, removals of the child's own keys, reads of other children's keys, counter
    /// increments and trims (``StressOperation/choose(for:using:)``).
    case mixed
    /// Counter increments only.
    case counter
    /// Puts, gets, removals and trims of random shared keys of one disk cache in the run's
    /// directory (``CacheStressWorker``), verified by ``CacheStressVerifier``.
    case cache
}

/// One operation of a stress child.
enum StressOperation: Sendable {
    /// Set one of the child's keys.
    case set
    /// Read one of the child's keys and compare it with the model (read-your-writes).
    case getOwn
    /// Read another child's string or bytes key and check that it is whole.
    case readOther
    /// Remove one of the child's keys.
    case remove
    /// Increment the shared counter under the exclusive lock.
    case increment
    /// Trim the store.
    case trim

    /// The next operation of `workload`. `mixed` weighs them 35% set, 25% own read, 20% read of
    /// another child's key, 8% removal, 10% increment and 2% trim.
    static func choose(for workload: StressWorkload, using random: inout some RandomNumberGenerator) -> StressOperation
    {
        guard workload == .mixed else { return .increment }
        switch Int.random(in: 0..<100, using: &random) {
        case ..<35: return .set
        case ..<60: return .getOwn
        case ..<80: return .readOther
        case ..<88: return .remove
        case ..<98: return .increment
        default: return .trim
        }
    }
}
