// The metrics a store reports when its configuration asks for them (`Configuration.metrics`).
//
// Invariant: every metric object is made once, when the handle opens, except the damage
// counters, which are made when a load finds damage (rare, and their dimensions are known only
// then). A handle opened without options has no `StoreMetrics` at all, so each point that
// reports costs one test of an optional and nothing else.

import CoreMetrics

/// The metrics of one store handle: its operations, and what happened to the files it shares
/// with the other handles of this process (write-backs, catch-ups with other processes, damage).
///
/// Labels (each after the options' prefix and a dot; the options' dimensions follow the ones
/// named here):
/// - `store.operations`, `op`: `get`, `set`, `remove` or `batch`, one per call on the handle;
/// - `store.writebacks`: whole-file rewrites through the write-back journal (compaction, trim,
///   `clearAll`, rekey, turning expiry on or off, writing a recovery back);
/// - `store.reloads`, `change`: `appended` (another process's appends decoded) or `reloaded`
///   (the whole store loaded again after another process rewrote, grew or cleared it);
/// - `store.damage`, `kind` and `decision`: a load that found damage, and what was decided.
final class StoreMetrics: Sendable {
    let options: MetricsOptions
    let gets: Counter
    let sets: Counter
    let removes: Counter
    let batches: Counter
    let writeBacks: Counter
    let appendsCaughtUp: Counter
    let reloads: Counter

    /// Makes every metric but the damage counters.
    init(_ options: MetricsOptions) {
        self.options = options
        gets = options.counter("store.operations", [("op", "get")])
        sets = options.counter("store.operations", [("op", "set")])
        removes = options.counter("store.operations", [("op", "remove")])
        batches = options.counter("store.operations", [("op", "batch")])
        writeBacks = options.counter("store.writebacks")
        appendsCaughtUp = options.counter("store.reloads", [("change", "appended")])
        reloads = options.counter("store.reloads", [("change", "reloaded")])
    }

    // Each count is a call, never inlined: a caller on a hot path then holds a test of its
    // optional and a call, and stays small enough to be inlined where it was (inlined, swift-metrics'
    // generic `increment` kept the store's typed getters from inlining their specialized get).

    /// Counts a get on the handle.
    @inline(never) func countGet() { gets.increment() }
    /// Counts a set on the handle.
    @inline(never) func countSet() { sets.increment() }
    /// Counts a removal on the handle.
    @inline(never) func countRemove() { removes.increment() }
    /// Counts a committed write batch on the handle.
    @inline(never) func countBatch() { batches.increment() }
    /// Counts a write-back.
    @inline(never) func countWriteBack() { writeBacks.increment() }

    /// Counts a catch-up with other processes' writes.
    func countCatchUp(_ change: ExternalChange.Kind) {
        switch change {
        case .appended: appendsCaughtUp.increment()
        case .reloaded: reloads.increment()
        }
    }

    /// The kind's case name, for a dimension value.
    static func name(of kind: DamageKind) -> String {
        switch kind {
        case .crcMismatch: "crcMismatch"
        case .lengthError: "lengthError"
        case .undecodable: "undecodable"
        case .wrongKeySuspected: "wrongKeySuspected"
        case .metaMissing: "metaMissing"
        }
    }
}

extension StoreMetrics {
    /// `configuration` with its recovery handler counting damage under its metrics options, if
    /// it has any; unchanged otherwise. The store consults that handler at every load.
    static func countingDamage(_ configuration: Configuration) -> Configuration {
        guard let options = configuration.metrics else { return configuration }
        var counting = configuration
        let handler = configuration.recoveryHandler
        counting.recoveryHandler = { event in
            let decision = handler?(event) ?? .default(for: event)
            options.counter("store.damage", [("kind", name(of: event.kind)), ("decision", decision.rawValue)])
                .increment()
            return decision
        }
        return counting
    }
}
